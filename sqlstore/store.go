// Package sqlstore implements mailroom.Store over database/sql, once, for
// both engines. The SQL is written to the common ground of SQLite 3.45+ and
// PostgreSQL 13+ ($N placeholders, ON CONFLICT, RETURNING), times are kept
// as integer microseconds since the Unix epoch so that both engines sort and
// compare them alike, and the few real differences (how to recognise a
// unique violation, an unreachable server) come in through Dialect.
//
// Packages sqlite and postgres open the connections, apply their own
// migrations and hand the result to New.
package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/mailroom/mailroom"
)

// Store is the SQL implementation of mailroom.Store.
type Store struct {
	// write takes every transaction that changes data. On SQLite it holds a
	// single connection, so writers queue in Go instead of failing with
	// SQLITE_BUSY; on PostgreSQL it is the same pool as read.
	write *sql.DB
	// read serves queries that change nothing.
	read      *sql.DB
	dialect   Dialect
	committer *committer
	keyReads  *keyReads
	// accountKeys are the accounts' integer keys, by id and by key.
	accountKeys accountKeys
	// Prepared statements of the hot paths, per pool.
	writeStmts, readStmts *stmtCache
	// migrationLock is the engine's lock of migrations (SetMigrationLock).
	migrationLock MigrationLock
}

var _ mailroom.Store = (*Store)(nil)

// New returns a store over already migrated databases.
func New(write, read *sql.DB, dialect Dialect) *Store {
	s := &Store{write: write, read: read, dialect: dialect, writeStmts: newStmtCache(write), readStmts: newStmtCache(read)}
	s.committer = newCommitter(s, max(1, dialect.Writes.Committers))
	s.keyReads = newKeyReads(s)
	return s
}

// EngineName is "sqlite" or "postgres".
func (s *Store) EngineName() string { return s.dialect.Name }

// Ping reports whether the database answers. Pooled connections that the
// server ended while the database was away would each fail once before the
// pool drops them: after a failure the idle ones are closed and the ping is
// tried once more on a new connection, so that readiness returns with the
// database, not one probe per stale connection later.
func (s *Store) Ping(ctx context.Context) error {
	err := s.read.PingContext(ctx)
	if err != nil && ctx.Err() == nil && s.dialect.Reads.FlushIdleAfterFailure {
		s.read.SetMaxIdleConns(0)
		s.read.SetMaxIdleConns(s.dialect.Reads.IdleConns)
		err = s.read.PingContext(ctx)
	}
	if err != nil {
		return mailroom.Unavailable(err)
	}
	return nil
}

// Close closes both pools.
func (s *Store) Close() error {
	s.committer.close()
	s.keyReads.close()
	s.writeStmts.close()
	s.readStmts.close()
	err := s.write.Close()
	if s.read != s.write {
		err = errors.Join(err, s.read.Close())
	}
	return err
}

// inTx runs fn in one write transaction and commits it, or rolls it back
// when fn or the commit fails.
func (s *Store) inTx(ctx context.Context, fn func(tx *sql.Tx) error) error {
	tx, err := s.write.BeginTx(ctx, nil)
	if err != nil {
		return s.wrap(err, "begin")
	}
	if err := fn(tx); err != nil {
		_ = tx.Rollback()
		return err
	}
	if err := tx.Commit(); err != nil {
		return s.wrap(err, "commit")
	}
	return nil
}

// inSnapshot runs fn in a read-only transaction whose queries all see one
// state of the database (Dialect.Reads.Snapshot).
func (s *Store) inSnapshot(ctx context.Context, fn func(tx *sql.Tx) error) error {
	tx, err := s.read.BeginTx(ctx, &s.dialect.Reads.Snapshot)
	if err != nil {
		return s.wrap(err, "begin read")
	}
	defer func() { _ = tx.Rollback() }()
	return fn(tx)
}

// wrap turns a driver error into the domain's terms: unavailable when the
// engine says so, otherwise an internal error that keeps the SQL text out of
// anything a client sees. *mailroom.Error values pass through unchanged.
func (s *Store) wrap(err error, op string) error {
	if err == nil {
		return nil
	}
	var me *mailroom.Error
	if errors.As(err, &me) {
		return err
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) || s.dialect.Errors.Unavailable(err) {
		return mailroom.Unavailable(fmt.Errorf("%s: %s: %w", s.dialect.Name, op, err))
	}
	return fmt.Errorf("%s: %s: %w", s.dialect.Name, op, err)
}
