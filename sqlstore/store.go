// Package sqlstore implements mailroom.Store over database/sql, once, for
// both engines. The SQL is written to the common ground of SQLite 3.45+ and
// PostgreSQL 13+ ($N placeholders, ON CONFLICT, RETURNING), times are kept
// as integer microseconds since the Unix epoch so that both engines sort and
// compare them alike, and the few real differences (how to recognise a
// unique violation, an unreachable server) come in through Engine.
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

// Engine describes what differs between the SQL engines.
type Engine struct {
	// Name is "sqlite" or "postgres", for logs and tests.
	Name string
	// IsUniqueViolation reports whether err is a unique-constraint failure.
	IsUniqueViolation func(error) bool
	// SkipLocked is appended to the sub-selects that claim work: " FOR
	// UPDATE SKIP LOCKED" on PostgreSQL, so nodes claim side by side; empty
	// on SQLite, whose single writer already makes a claim atomic.
	SkipLocked string
	// LockRows is appended to a SELECT that must lock the rows it reads
	// until the transaction ends: " FOR UPDATE" on PostgreSQL; empty on
	// SQLite, where the single writer serialises transactions anyway.
	LockRows string
	// Committers is how many group-commit transactions may run at once:
	// 1 for SQLite (one writer), a few for PostgreSQL.
	Committers int
	// NowMicros is an SQL expression for the database's current time in
	// microseconds since the Unix epoch: leases and heartbeats are kept in
	// the database's clock, so that nodes with skewed clocks agree on them.
	NowMicros string
	// DomainOf returns an SQL expression for the lower-case domain of the
	// address in column col: the text after its last '@'.
	DomainOf func(col string) string
	// AnonymousParams makes the multi-row statements (insertRows,
	// queryIn) number their parameters implicitly ("?", each one more
	// than the last) rather than as $N, which costs SQLite's driver a
	// lookup through every parameter name to bind each one.
	AnonymousParams bool
	// Snapshot are the options of a read that must see one state of
	// several tables (a message, its recipients and its events): on
	// PostgreSQL a REPEATABLE READ transaction, whose statements share one
	// snapshot; nil on SQLite, where any read transaction does in WAL mode.
	Snapshot *sql.TxOptions
	// IdleConns is how many idle connections the read pool keeps; Ping
	// flushes them after a failure. Zero (SQLite, whose connections open
	// a file and cannot go stale) flushes nothing.
	IdleConns int
	// IsConflict reports whether err aborted a transaction that may
	// simply be run again: a deadlock or a serialization failure on
	// PostgreSQL (SQLSTATE 40P01, 40001); nil on SQLite.
	IsConflict func(error) bool
	// IndexedBy forces the index of a table in a FROM clause: " INDEXED BY
	// name" on SQLite, whose planner without statistics may walk another
	// index than the one the email log chose (ListMessages); empty on
	// PostgreSQL, whose planner has per-value statistics.
	IndexedBy func(index string) string
	// CustomPlans, run first in the email log's read, holds the engine to
	// the plans the log is built for: each statement planned for its
	// values, walking its driver's index in order (ListMessages). On
	// PostgreSQL it sets, for that transaction only, plan_cache_mode =
	// force_custom_plan (a cached generic plan assumes an average value: a
	// status of 20% of the messages, when failed is 1%, and may walk
	// another index than the one the log chose), and turns off sorts,
	// bitmap scans, hash and merge joins, materializing and parallel
	// workers: the checks in a form no index serves (m.category || '' = $4)
	// are estimated to keep 0.5% of the rows, and with that guess
	// PostgreSQL read every match of a tag into a bitmap and sorted them
	// (190 ms for a 1% tag at a million) instead of walking the tag's index
	// to the page's 20. Empty on SQLite (INDEXED BY holds it there).
	CustomPlans string
	// ArrayInserts writes an accept group in one statement whose rows come
	// as one array a column (writeAcceptArrays): PostgreSQL, where each
	// statement is a round trip; SQLite has no arrays, and its statements
	// are calls within the process.
	ArrayInserts bool
	// MinKey is the least of a column of keys (idKey) as an aggregate, a
	// format with one %s: PostgreSQL has no min(bytea), and takes the
	// least of their text (hex, which sorts as the bytes do); "" is
	// min(%s), as SQLite has it. Only keys of one engine are compared.
	MinKey string
	// IsUnavailable reports whether err means the database cannot be reached
	// or is too busy to answer, rather than a bug in a query.
	IsUnavailable func(error) bool
	// NewAccountKey is the SQL value of a new account's key (accounts.key,
	// migration 00016) in its INSERT: DEFAULT on PostgreSQL, whose identity
	// column draws it from a sequence; on SQLite one more than any key
	// stored, in accounts or the mail tables, which the one writer makes
	// atomic and which never hands out a key some row still holds.
	NewAccountKey string
}

func (e Engine) isConflict(err error) bool { return e.IsConflict != nil && e.IsConflict(err) }

func (e Engine) minKey(column string) string {
	if e.MinKey == "" {
		return "min(" + column + ")"
	}
	return fmt.Sprintf(e.MinKey, column)
}

func (e Engine) indexedBy(index string) string {
	if e.IndexedBy == nil || index == "" {
		return ""
	}
	return e.IndexedBy(index)
}

// Store is the SQL implementation of mailroom.Store.
type Store struct {
	// write takes every transaction that changes data. On SQLite it holds a
	// single connection, so writers queue in Go instead of failing with
	// SQLITE_BUSY; on PostgreSQL it is the same pool as read.
	write *sql.DB
	// read serves queries that change nothing.
	read      *sql.DB
	engine    Engine
	committer *committer
	keyReads  *keyReads
	// accountKeys are the accounts' integer keys, by id and by key.
	accountKeys accountKeys
	// Prepared statements of the hot paths, per pool.
	writeStmts, readStmts *stmtCache
}

var _ mailroom.Store = (*Store)(nil)

// New returns a store over already migrated databases.
func New(write, read *sql.DB, engine Engine) *Store {
	s := &Store{write: write, read: read, engine: engine, writeStmts: newStmtCache(write), readStmts: newStmtCache(read)}
	s.committer = newCommitter(s, max(1, engine.Committers))
	s.keyReads = newKeyReads(s)
	return s
}

// EngineName is "sqlite" or "postgres".
func (s *Store) EngineName() string { return s.engine.Name }

// Ping reports whether the database answers. Pooled connections that the
// server ended while the database was away would each fail once before the
// pool drops them: after a failure the idle ones are closed and the ping is
// tried once more on a new connection, so that readiness returns with the
// database, not one probe per stale connection later.
func (s *Store) Ping(ctx context.Context) error {
	err := s.read.PingContext(ctx)
	if err != nil && ctx.Err() == nil && s.engine.IdleConns > 0 {
		s.read.SetMaxIdleConns(0)
		s.read.SetMaxIdleConns(s.engine.IdleConns)
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
// state of the database (Engine.Snapshot).
func (s *Store) inSnapshot(ctx context.Context, fn func(tx *sql.Tx) error) error {
	tx, err := s.read.BeginTx(ctx, s.engine.Snapshot)
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
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) || s.engine.IsUnavailable(err) {
		return mailroom.Unavailable(fmt.Errorf("%s: %s: %w", s.engine.Name, op, err))
	}
	return fmt.Errorf("%s: %s: %w", s.engine.Name, op, err)
}
