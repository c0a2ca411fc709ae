package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/mailroom/mailroom/atomicfile"
)

// Backup writes a consistent copy of the store in dataDir to out, while
// `serve` may be running on it, and returns the copy's size in bytes.
//
// The copy is SQLite's VACUUM INTO (https://sqlite.org/lang_vacuum.html#vacuuminto):
// one read transaction, so the copy is the store as of one moment, every
// commit before it in and none after, and in WAL mode it neither stops
// the writer nor waits for it. It goes to a file beside out, made 0600
// before any row is written to it, which takes out's name only once
// complete and checked, so that out is never half a backup.
//
// The data directory's secret key is not copied: the store holds its DKIM
// keys and webhook secrets sealed under it, and a backup kept with the key
// would give both away (docs/api.md "Backups").
func Backup(ctx context.Context, dataDir, out string) (size int64, err error) {
	path := filepath.Join(dataDir, FileName)
	if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
		return 0, fmt.Errorf("%w at %s", ErrNoStore, dataDir)
	} else if err != nil {
		return 0, err
	}
	if err := outsideDataDir(dataDir, out); err != nil {
		return 0, err
	}
	tmp, err := os.CreateTemp(filepath.Dir(out), "."+filepath.Base(out)+".tmp-*")
	if err != nil {
		return 0, fmt.Errorf("create the backup file: %w", err)
	}
	tmpName := tmp.Name()
	err = tmp.Chmod(0o600)
	if closeErr := tmp.Close(); err == nil {
		err = closeErr
	}
	defer func() {
		if err != nil {
			os.Remove(tmpName)
		}
	}()
	if err != nil {
		return 0, err
	}

	// Not query_only: SQLite counts VACUUM INTO as a write, though it
	// changes nothing of the store it reads.
	db, err := sql.Open("sqlite", "file:"+path+"?_pragma=busy_timeout(10000)")
	if err != nil {
		return 0, err
	}
	defer db.Close()
	if _, err := db.ExecContext(ctx, "VACUUM INTO ?", tmpName); err != nil {
		return 0, fmt.Errorf("copy the store: %w", err)
	}
	if err := checkStoreFile(ctx, tmpName); err != nil {
		return 0, fmt.Errorf("the copy does not read back: %w", err)
	}
	if err := atomicfile.Install(tmpName, out); err != nil {
		return 0, fmt.Errorf("write %s: %w", out, err)
	}
	info, err := os.Stat(out)
	if err != nil {
		return 0, err
	}
	return info.Size(), nil
}

// ErrBackupInDataDir refuses a backup written into the data directory.
var ErrBackupInDataDir = errors.New("the backup must go outside the data directory")

// outsideDataDir refuses an out inside dataDir, links followed: there it
// could take the name of the store's own files (mailroom.db beside its
// live -wal, which corrupts the store; secret.key, which loses the key),
// and a backup beside the store is lost with its disk anyway.
func outsideDataDir(dataDir, out string) error {
	dir, err := filepath.EvalSymlinks(dataDir)
	if err != nil {
		return err
	}
	dir, err = filepath.Abs(dir)
	if err != nil {
		return err
	}
	outDir, err := filepath.EvalSymlinks(filepath.Dir(out))
	if err != nil {
		return fmt.Errorf("the backup's directory: %w", err)
	}
	outDir, err = filepath.Abs(outDir)
	if err != nil {
		return err
	}
	if rel, err := filepath.Rel(dir, outDir); err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return fmt.Errorf("%w (%s is in %s): keep backups on another disk, apart from the store", ErrBackupInDataDir, out, dataDir)
	}
	return nil
}

// sqliteHeader opens every SQLite 3 database file (https://sqlite.org/fileformat.html §1.3.1).
const sqliteHeader = "SQLite format 3\x00"

// ErrNotAStore is the answer for a file that is not a Mailroom SQLite store.
var ErrNotAStore = errors.New("not a Mailroom SQLite store")

// checkStoreFile makes sure the file at path is an intact SQLite database
// holding a Mailroom store (goose's version table and the accounts).
func checkStoreFile(ctx context.Context, path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	header := make([]byte, len(sqliteHeader))
	_, err = f.Read(header)
	f.Close()
	if err != nil || string(header) != sqliteHeader {
		return fmt.Errorf("%w: %s is not an SQLite database", ErrNotAStore, path)
	}
	db, err := sql.Open("sqlite", "file:"+path+"?_pragma=query_only(1)")
	if err != nil {
		return err
	}
	defer db.Close()
	var check string
	if err := db.QueryRowContext(ctx, "PRAGMA quick_check").Scan(&check); err != nil {
		return fmt.Errorf("%w: %s does not read as an SQLite database: %w", ErrNotAStore, path, err)
	} else if check != "ok" {
		return fmt.Errorf("%w: %s is damaged (quick_check: %s)", ErrNotAStore, path, check)
	}
	var tables int
	if err := db.QueryRowContext(ctx, `SELECT count(*) FROM sqlite_master WHERE type = 'table'
		AND name IN ('goose_db_version', 'accounts', 'api_keys')`).Scan(&tables); err != nil {
		return err
	}
	if tables != 3 {
		return fmt.Errorf("%w: %s is an SQLite database, but holds no Mailroom store", ErrNotAStore, path)
	}
	return nil
}
