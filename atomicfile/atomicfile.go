// Package atomicfile writes small files (keys, certificates) so that a
// crash never leaves half of one: the bytes go to a synced temporary file
// in the same directory, which then takes the final name in one step. The
// mode is set with Chmod, so the process umask can neither widen nor
// narrow it.
package atomicfile

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// Replace stores data at path with mode perm, replacing any file there: a
// reader sees the old file or the whole new one (rename within a
// directory is atomic).
func Replace(path string, data []byte, perm os.FileMode) error {
	tmp, err := writeTemp(path, data, perm)
	if err != nil {
		return err
	}
	if err := os.Rename(tmp, path); err != nil {
		os.Remove(tmp)
		return err
	}
	syncDir(filepath.Dir(path))
	return nil
}

// CreateExclusive stores data at path with mode perm only if path does not
// exist yet; otherwise it returns an error wrapping fs.ErrExist. Unlike
// Replace it never overwrites a file another process has just stored, so
// two processes racing to create one key settle on a single one: the
// temporary file is hard-linked to path, which fails if path exists. Where
// the file system has no hard links it falls back to a rename.
func CreateExclusive(path string, data []byte, perm os.FileMode) error {
	tmp, err := writeTemp(path, data, perm)
	if err != nil {
		return err
	}
	defer os.Remove(tmp) // after a link, or on failure; harmless after rename
	switch err := os.Link(tmp, path); {
	case err == nil:
	case errors.Is(err, fs.ErrExist):
		return fmt.Errorf("%s: %w", path, fs.ErrExist)
	default:
		if _, statErr := os.Lstat(path); statErr == nil {
			return fmt.Errorf("%s: %w", path, fs.ErrExist)
		}
		if err := os.Rename(tmp, path); err != nil {
			return err
		}
	}
	syncDir(filepath.Dir(path))
	return nil
}

// writeTemp writes data to a synced temporary file beside path and returns
// its name.
func writeTemp(path string, data []byte, perm os.FileMode) (string, error) {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return "", err
	}
	err = f.Chmod(perm)
	if err == nil {
		_, err = f.Write(data)
	}
	if err == nil {
		err = f.Sync()
	}
	if closeErr := f.Close(); err == nil {
		err = closeErr
	}
	if err != nil {
		os.Remove(f.Name())
		return "", err
	}
	return f.Name(), nil
}

// syncDir makes the new directory entry durable. It is best effort: some
// platforms cannot open or sync a directory, and the file is already safe.
func syncDir(dir string) {
	d, err := os.Open(dir)
	if err != nil {
		return
	}
	d.Sync()
	d.Close()
}

// Install gives the file at tmp, written by the caller in path's directory
// (too large to hold in memory, such as a database copy), the name path:
// tmp is synced, renamed over path in one step, and the directory entry
// made durable, so that path holds the old file or the whole new one.
func Install(tmp, path string) error {
	f, err := os.OpenFile(tmp, os.O_RDWR, 0)
	if err != nil {
		return err
	}
	err = f.Sync()
	if closeErr := f.Close(); err == nil {
		err = closeErr
	}
	if err != nil {
		return err
	}
	if err := os.Rename(tmp, path); err != nil {
		return err
	}
	syncDir(filepath.Dir(path))
	return nil
}
