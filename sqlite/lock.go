package sqlite

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
)

// serveLockName is the file `serve` holds locked for as long as it runs.
const serveLockName = "serve.lock"

// ErrDataDirInUse is returned by LockForServe when another process serves
// the data directory.
var ErrDataDirInUse = errors.New("another mailroom serve is already using this data directory")

// LockForServe takes the data directory for this process alone: on SQLite
// there is exactly one node per data directory, so that at its start it may
// release every claim left from before (a crash) and deliver it at once.
// The lock is an flock, which the kernel drops when the process dies, so a
// kill -9 never leaves it behind. The commands that change accounts and
// keys do not take it and work while serve runs.
func LockForServe(dataDir string) (unlock func(), err error) {
	if err := os.MkdirAll(dataDir, 0o700); err != nil {
		return nil, fmt.Errorf("create data directory: %w", err)
	}
	path := filepath.Join(dataDir, serveLockName)
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, fmt.Errorf("%s: %w (or use PostgreSQL to run several nodes)", dataDir, ErrDataDirInUse)
		}
		return nil, fmt.Errorf("lock %s: %w", path, err)
	}
	return func() {
		_ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
		f.Close()
	}, nil
}
