// Package sqlite opens Mailroom's embedded storage: one SQLite file in the
// data directory, through modernc.org/sqlite (pure Go, so the binary stays
// static), and serves it through package sqlstore.
package sqlite

import (
	"context"
	"database/sql"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"syscall"

	"github.com/pressly/goose/v3"
	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"

	"github.com/mailroom/mailroom/sqlstore"
)

//go:embed migrations/*.sql
var migrations embed.FS

// FileName is the database file's name inside the data directory.
const FileName = "mailroom.db"

// Open opens (creating if needed) the database in dataDir and applies the
// migrations it lacks.
//
// Writes go through one connection in IMMEDIATE transactions: SQLite has one
// writer at a time, and a deferred transaction that upgrades to a write lock
// fails with SQLITE_BUSY under concurrency instead of waiting. Reads use a
// pool of their own, which WAL lets run beside the writer. synchronous=FULL
// makes every commit durable before it returns (a 200 means on disk).
func Open(ctx context.Context, dataDir string) (*sqlstore.Store, error) {
	s, _, err := open(ctx, dataDir, true)
	return s, err
}

// ErrNoStore is OpenExisting's answer when dataDir holds no database.
var ErrNoStore = errors.New("no store")

// OpenExisting is Open for a database that exists: when dataDir or its
// database file does not, it creates nothing and returns an error that
// wraps ErrNoStore. The commands that read or change what is stored (an
// account's keys) use it, so that a mistyped --data-dir, or a run in the
// wrong directory, is not answered with a new empty store left behind.
func OpenExisting(ctx context.Context, dataDir string) (*sqlstore.Store, error) {
	s, _, err := open(ctx, dataDir, false)
	return s, err
}

// open opens the database in dataDir, creating the directory and the file
// when create says so, applies the migrations it lacks and returns their
// versions.
func open(ctx context.Context, dataDir string, create bool) (*sqlstore.Store, []int64, error) {
	path := filepath.Join(dataDir, FileName)
	if create {
		if err := os.MkdirAll(dataDir, 0o700); err != nil {
			return nil, nil, fmt.Errorf("create data directory: %w", err)
		}
	}
	return openFile(ctx, path, create)
}

// openFile is open for the database file at path (restore opens the copy
// it is about to put in place).
func openFile(ctx context.Context, path string, create bool) (*sqlstore.Store, []int64, error) {
	if create {
		// Create the file owner-only before SQLite does (it would use the
		// umask, often 0644); its -wal and -shm files copy these permissions.
		f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o600)
		if err != nil {
			return nil, nil, fmt.Errorf("create database file: %w", err)
		}
		f.Close()
	} else if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
		return nil, nil, fmt.Errorf("%w at %s", ErrNoStore, filepath.Dir(path))
	} else if err != nil {
		return nil, nil, err
	}
	// temp_store(MEMORY): a multi-row INSERT inside a transaction keeps a
	// statement journal, to undo itself alone if it fails; on disk, each
	// one opened, wrote and unlinked a temporary file (a fifth of the
	// writer's time in the accept profile, issue 17). It only ever serves
	// a rollback within a transaction, so memory loses nothing durable.
	pragmas := url.Values{"_pragma": {
		"busy_timeout(10000)", "journal_mode(WAL)", "synchronous(FULL)", "foreign_keys(1)", "temp_store(MEMORY)",
	}}
	writeDSN := "file:" + path + "?" + pragmas.Encode() + "&_txlock=immediate"
	pragmas["_pragma"] = append(pragmas["_pragma"], "query_only(1)")
	readDSN := "file:" + path + "?" + pragmas.Encode()

	write, err := sql.Open("sqlite", writeDSN)
	if err != nil {
		return nil, nil, err
	}
	write.SetMaxOpenConns(1)
	write.SetConnMaxIdleTime(0)
	applied, err := migrate(ctx, write, path+".migrate.lock")
	if err != nil {
		write.Close()
		return nil, nil, err
	}
	read, err := sql.Open("sqlite", readDSN)
	if err != nil {
		write.Close()
		return nil, nil, err
	}
	read.SetMaxOpenConns(dialect.Reads.IdleConns) // every connection may stay idle
	read.SetMaxIdleConns(dialect.Reads.IdleConns)
	s := sqlstore.New(write, read, dialect)
	s.SetMigrationLock(func(context.Context) (func(), error) { return lockMigrations(path + ".migrate.lock") })
	return s, applied, nil
}

// Migrate applies the migrations the database in dataDir lacks (creating
// it, as Open does) and returns their versions, in order (none when it
// was up to date).
func Migrate(ctx context.Context, dataDir string) ([]int64, error) {
	s, applied, err := open(ctx, dataDir, true)
	if err != nil {
		return nil, err
	}
	return applied, s.Close()
}

// migrate applies the embedded migrations under an exclusive file lock, so
// that two processes starting on one data directory do not both apply one.
func migrate(ctx context.Context, db *sql.DB, lockPath string) ([]int64, error) {
	unlock, err := lockMigrations(lockPath)
	if err != nil {
		return nil, err
	}
	defer unlock()

	sub, err := fs.Sub(migrations, "migrations")
	if err != nil {
		return nil, err
	}
	p, err := goose.NewProvider(goose.DialectSQLite3, db, sub)
	if err != nil {
		return nil, fmt.Errorf("migrations: %w", err)
	}
	return sqlstore.ApplyMigrations(ctx, p, db, dialect.SQL.NowMicros)
}

// lockMigrations takes the exclusive file lock at lockPath, waiting for
// it, and returns its release.
func lockMigrations(lockPath string) (unlock func(), err error) {
	lock, err := os.OpenFile(lockPath, os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return nil, fmt.Errorf("open migration lock: %w", err)
	}
	if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX); err != nil {
		lock.Close()
		return nil, fmt.Errorf("take migration lock: %w", err)
	}
	return func() {
		_ = syscall.Flock(int(lock.Fd()), syscall.LOCK_UN)
		lock.Close()
	}, nil
}

// indexedBy forces index, but for message_tags_lookup: message_tags is
// that key alone, a WITHOUT ROWID table (migration 00015), which has no
// other path to choose.
func indexedBy(index string) string {
	if index == "message_tags_lookup" {
		return ""
	}
	return " INDEXED BY " + index
}

// dialect is what SQLite does its own way.
var dialect = sqlstore.Dialect{
	Name: "sqlite",
	Errors: sqlstore.Errors{
		UniqueViolation: func(err error) bool {
			var e *sqlite.Error
			return errors.As(err, &e) &&
				(e.Code() == sqlite3.SQLITE_CONSTRAINT_UNIQUE || e.Code() == sqlite3.SQLITE_CONSTRAINT_PRIMARYKEY)
		},
		// The one writer runs transactions one at a time: none is aborted
		// for another's sake.
		Conflict:    func(error) bool { return false },
		Unavailable: isUnavailable,
	},
	SQL: sqlstore.Fragments{
		// One node per data directory: the database's clock is that node's.
		NowMicros: "CAST(unixepoch('subsec') * 1000000 AS INTEGER)",
		// rtrim(a, chars) with the address's own characters other than '@'
		// strips back to its last '@'; what is left is removed from the front.
		DomainOf: func(col string) string {
			return "lower(substr(" + col + ", length(rtrim(" + col + ", replace(" + col + ", '@', ''))) + 1))"
		},
		MinKey:        "min(%s)",
		MaxKey:        "max(%s)",
		NewAccountKey: newAccountKey,
		IndexedBy:     indexedBy,
	},
	// The one writer serialises every change: no clause locks rows.
	Locks: sqlstore.Locks{SkipLocked: "", Rows: ""},
	Writes: sqlstore.Writes{
		Committers: 1,
		// The driver looks each numbered parameter's name up in a list, once
		// per parameter: binding n of them costs n², a third of the CPU of a
		// batch's accept before this.
		AnonymousParams: true,
		ArrayInserts:    false,
	},
	Reads: sqlstore.Reads{
		Snapshot:              sql.TxOptions{}, // any read transaction, in WAL mode
		CustomPlans:           "",
		IdleConns:             max(4, 2*runtime.NumCPU()),
		FlushIdleAfterFailure: false,
	},
}

// isUnavailable is Dialect.Errors.Unavailable: the database is locked,
// busy, full or cannot be opened, rather than a query being wrong.
func isUnavailable(err error) bool {
	var e *sqlite.Error
	if !errors.As(err, &e) {
		return false
	}
	switch e.Code() & 0xff { // the primary result code
	case sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED, sqlite3.SQLITE_IOERR, sqlite3.SQLITE_FULL, sqlite3.SQLITE_CANTOPEN:
		return true
	}
	return false
}

// newAccountKey is one more than any account key stored (migration 00016):
// in accounts, and in the mail tables, whose rows would outlive an account
// deleted by hand, so that no account is given a key that finds another's
// mail. Each max is one step down an index that leads with the key.
const newAccountKey = `(SELECT coalesce(max(k), 0) + 1 FROM (SELECT max(key) AS k FROM accounts
	UNION ALL SELECT max(account_id) FROM messages UNION ALL SELECT max(account_id) FROM events))`
