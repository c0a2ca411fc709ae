package sealer

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// writeFileExclusive stores data at path with mode perm, all at once, and
// only if path does not exist yet; otherwise it returns an error wrapping
// fs.ErrExist.
//
// The bytes go to a synced temporary file in the same directory that is
// then hard-linked to path. The link appears whole or not at all, so a
// crash never leaves half a key, and unlike rename it never replaces a file
// another process has just stored. Where the file system has no hard links
// the temporary file is renamed instead, which keeps the first guarantee.
func writeFileExclusive(path string, data []byte, perm os.FileMode) error {
	dir := filepath.Dir(path)
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return err
	}
	tmpName := tmp.Name()
	defer os.Remove(tmpName) // after a link, or on failure; harmless after rename
	if err := writeAndClose(tmp, data, perm); err != nil {
		return err
	}
	switch err := os.Link(tmpName, path); {
	case err == nil:
	case errors.Is(err, fs.ErrExist):
		return fmt.Errorf("%s: %w", path, fs.ErrExist)
	default:
		if _, statErr := os.Lstat(path); statErr == nil {
			return fmt.Errorf("%s: %w", path, fs.ErrExist)
		}
		if err := os.Rename(tmpName, path); err != nil {
			return err
		}
	}
	syncDir(dir)
	return nil
}

// writeAndClose gives f mode perm (regardless of umask), writes data and
// syncs it to disk before closing.
func writeAndClose(f *os.File, data []byte, perm os.FileMode) error {
	err := f.Chmod(perm)
	if err == nil {
		_, err = f.Write(data)
	}
	if err == nil {
		err = f.Sync()
	}
	if closeErr := f.Close(); err == nil {
		err = closeErr
	}
	return err
}

// syncDir makes the new directory entry durable. It is best effort: some
// platforms cannot open or sync a directory.
func syncDir(dir string) {
	d, err := os.Open(dir)
	if err != nil {
		return
	}
	d.Sync()
	d.Close()
}
