package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/mailroom/mailroom/atomicfile"
)

// Restored says what Restore did.
type Restored struct {
	// Applied are the migrations that brought an older backup forward.
	Applied []int64
	// Verified is false when the backup holds no verifier of the secret
	// key (taken from a store no Mailroom since migration 00024 served), so
	// that the key could not be checked; the first serve writes one.
	Verified bool
	// MovedAside is where the store the data directory held before went
	// (its -wal and -shm files beside it, with the same suffix); empty
	// when there was none.
	MovedAside string
}

// Restore puts the backup at from (a file Backup wrote) in place as the
// store of dataDir.
//
// It holds dataDir's serve lock throughout, so it is refused (an error
// wrapping ErrDataDirInUse) while a node runs there, and no node can start
// on a half-restored directory. It works on a copy beside the store: checks
// that it is a Mailroom SQLite store, forgets the nodes the backup
// recorded as running (none runs on it now: the lock is held), applies the
// migrations it lacks, and asks checkKey whether the secret key the store
// will be served with matches the backup's verifier (nil when it has
// none), refusing the restore on any error. Only then does the copy take
// the store's name in one rename; the store that was there is kept beside
// it, renamed, never deleted.
func Restore(ctx context.Context, from, dataDir string, checkKey func(verifier []byte) error) (*Restored, error) {
	if err := checkStoreFile(ctx, from); err != nil {
		return nil, err
	}
	unlock, err := LockForServe(dataDir)
	if err != nil {
		return nil, err
	}
	defer unlock()
	path := filepath.Join(dataDir, FileName)
	tmp, err := copyBeside(from, path)
	if err != nil {
		return nil, err
	}
	cleanUp := func() {
		for _, suffix := range []string{"", "-wal", "-shm", ".migrate.lock"} {
			os.Remove(tmp + suffix)
		}
	}
	r, err := prepare(ctx, tmp, checkKey)
	if err != nil {
		cleanUp()
		return nil, err
	}
	if r.MovedAside, err = moveAside(path); err != nil {
		cleanUp()
		return nil, err
	}
	if err := atomicfile.Install(tmp, path); err != nil {
		cleanUp()
		if r.MovedAside != "" {
			_ = os.Rename(r.MovedAside, path) // the store that was there, back
			_ = os.Rename(r.MovedAside+"-wal", path+"-wal")
			r.MovedAside = ""
		}
		return nil, fmt.Errorf("put the restored store in place: %w", err)
	}
	cleanUp() // the migration lock file of the copy
	return r, nil
}

// prepare readies the copy at tmp to be the store: nodes forgotten,
// migrated, its verifier held against the key. Its connections are closed
// on return, which leaves the copy whole in one file (the last connection
// of a WAL database checkpoints it and removes the -wal file).
func prepare(ctx context.Context, tmp string, checkKey func([]byte) error) (*Restored, error) {
	db, err := sql.Open("sqlite", "file:"+tmp+"?_pragma=busy_timeout(10000)")
	if err != nil {
		return nil, err
	}
	// The backup was taken from a running node, whose row it holds with a
	// fresh heartbeat: left there, it would pass for a live node, and the
	// migrations would wait for it to stop.
	var hasNodes int
	err = db.QueryRowContext(ctx, "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'nodes'").Scan(&hasNodes)
	if err == nil && hasNodes == 1 {
		_, err = db.ExecContext(ctx, "DELETE FROM nodes")
	}
	db.Close()
	if err != nil {
		return nil, fmt.Errorf("forget the backup's nodes: %w", err)
	}
	s, applied, err := openFile(ctx, tmp, false)
	if err != nil {
		return nil, fmt.Errorf("migrate the backup: %w", err)
	}
	defer s.Close()
	verifier, err := s.SecretVerifier(ctx)
	if err != nil {
		return nil, err
	}
	if err := checkKey(verifier); err != nil {
		return nil, err
	}
	return &Restored{Applied: applied, Verified: verifier != nil}, nil
}

// copyBeside copies the file at from to a new file (mode 0600) in the
// directory of path, synced, and returns its name.
func copyBeside(from, path string) (string, error) {
	src, err := os.Open(from)
	if err != nil {
		return "", err
	}
	defer src.Close()
	dst, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".restore-*")
	if err != nil {
		return "", err
	}
	err = dst.Chmod(0o600)
	if err == nil {
		_, err = io.Copy(dst, src)
	}
	if err == nil {
		err = dst.Sync()
	}
	if closeErr := dst.Close(); err == nil {
		err = closeErr
	}
	if err != nil {
		os.Remove(dst.Name())
		return "", fmt.Errorf("copy the backup: %w", err)
	}
	return dst.Name(), nil
}

// moveAside renames the store at path, with its -wal and -shm files
// (SQLite finds them by name: renamed together they stay one store), to
// path.before-restore-TIME, and returns that name; "" when there is none.
func moveAside(path string) (string, error) {
	if _, err := os.Stat(path); errors.Is(err, os.ErrNotExist) {
		return "", nil
	}
	aside := path + ".before-restore-" + time.Now().UTC().Format("20060102T150405Z")
	for _, suffix := range []string{"-wal", "-shm", ""} { // the database last
		if err := os.Rename(path+suffix, aside+suffix); err != nil && !errors.Is(err, os.ErrNotExist) {
			return "", fmt.Errorf("move the store there aside: %w", err)
		}
	}
	return aside, nil
}
