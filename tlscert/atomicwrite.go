package tlscert

import (
	"os"
	"path/filepath"
)

// writeFileAtomic replaces path with data, readable per perm.
//
// The bytes go to a temporary file in the same directory, are synced, and
// only then renamed over path: rename within a directory is atomic, so a
// crash leaves either the old file or the whole new one, never half a key.
// The mode is set with Chmod rather than at creation so that the process
// umask cannot widen or narrow it.
func writeFileAtomic(path string, data []byte, perm os.FileMode) (err error) {
	dir := filepath.Dir(path)
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			tmp.Close()
			os.Remove(tmp.Name())
		}
	}()
	if err = tmp.Chmod(perm); err != nil {
		return err
	}
	if _, err = tmp.Write(data); err != nil {
		return err
	}
	if err = tmp.Sync(); err != nil {
		return err
	}
	if err = tmp.Close(); err != nil {
		return err
	}
	if err = os.Rename(tmp.Name(), path); err != nil {
		return err
	}
	syncDir(dir)
	return nil
}

// syncDir makes a rename in dir durable. It is best effort: some platforms
// cannot open or sync a directory, and the file itself is already safe.
func syncDir(dir string) {
	d, err := os.Open(dir)
	if err != nil {
		return
	}
	d.Sync()
	d.Close()
}
