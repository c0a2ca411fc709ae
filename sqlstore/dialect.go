package sqlstore

import (
	"database/sql"
	"fmt"
)

// Dialect is what differs between the SQL engines, in five groups: how the
// driver's errors read, the SQL text that differs, row locks, how writes
// are batched and how reads see the database. Packages sqlite and postgres
// each build one and hand it to New.
//
// Every field is set by both engines. Where an engine needs nothing, its
// dialect says so with an explicit value (an empty clause to append, a
// function that answers false or "", zero transaction options), so that no
// caller has to know what a nil would have meant.
type Dialect struct {
	// Name is "sqlite" or "postgres", for logs and tests.
	Name   string
	Errors Errors
	SQL    Fragments
	Locks  Locks
	Writes Writes
	Reads  Reads
}

// Errors classifies the driver's errors.
type Errors struct {
	// UniqueViolation reports whether err is a unique-constraint failure.
	UniqueViolation func(error) bool
	// Conflict reports whether err aborted a transaction that may simply
	// be run again: a deadlock or a serialization failure on PostgreSQL
	// (SQLSTATE 40P01, 40001). Never on SQLite, whose one writer runs
	// transactions one at a time.
	Conflict func(error) bool
	// Unavailable reports whether err means the database cannot be
	// reached or is too busy to answer, rather than a bug in a query.
	Unavailable func(error) bool
}

// Fragments are the pieces of SQL text that the engines write
// differently.
type Fragments struct {
	// NowMicros is an SQL expression for the database's current time in
	// microseconds since the Unix epoch: leases and heartbeats are kept in
	// the database's clock, so that nodes with skewed clocks agree on them.
	NowMicros string
	// DomainOf returns an SQL expression for the lower-case domain of the
	// address in column col: the text after its last '@'.
	DomainOf func(col string) string
	// MinKey is the least of a column of keys (idKey) as an aggregate, a
	// format with one %s: PostgreSQL has no min(bytea), and takes the
	// least of their text (hex, which sorts as the bytes do); SQLite has
	// min(%s). Only keys of one engine are compared.
	MinKey string
	// MaxKey is the greatest of a column of keys, as MinKey the least.
	MaxKey string
	// NewAccountKey is the SQL value of a new account's key (accounts.key,
	// migration 00016) in its INSERT: DEFAULT on PostgreSQL, whose identity
	// column draws it from a sequence; on SQLite one more than any key
	// stored, in accounts or the mail tables, which the one writer makes
	// atomic and which never hands out a key some row still holds.
	NewAccountKey string
	// IndexedBy forces the index of a table in a FROM clause: " INDEXED BY
	// name" on SQLite, whose planner without statistics may walk another
	// index than the one the email log chose (ListMessages); "" on
	// PostgreSQL, whose planner has per-value statistics (Reads.CustomPlans
	// holds it to the log's plans there).
	IndexedBy func(index string) string
}

// Locks are the clauses that lock rows. Both are empty on SQLite, whose
// single writer already serialises every transaction that changes data.
type Locks struct {
	// SkipLocked is appended to the sub-selects that claim work: " FOR
	// UPDATE SKIP LOCKED" on PostgreSQL, so nodes claim side by side.
	SkipLocked string
	// Rows is appended to a SELECT that must lock the rows it reads until
	// the transaction ends: " FOR UPDATE" on PostgreSQL.
	Rows string
}

// Writes says how writes are batched.
type Writes struct {
	// Committers is how many group-commit transactions may run at once:
	// 1 for SQLite (one writer), a few for PostgreSQL.
	Committers int
	// AnonymousParams makes the multi-row statements (insertRows,
	// queryIn) number their parameters implicitly ("?", each one more
	// than the last) rather than as $N, which costs SQLite's driver a
	// lookup through every parameter name to bind each one.
	AnonymousParams bool
	// ArrayInserts writes an accept group in one statement whose rows come
	// as one array a column (writeAcceptArrays): PostgreSQL, where each
	// statement is a round trip; SQLite has no arrays, and its statements
	// are calls within the process.
	ArrayInserts bool
}

// Reads says how reads see the database.
type Reads struct {
	// Snapshot are the options of a read that must see one state of
	// several tables (a message, its recipients and its events): on
	// PostgreSQL a REPEATABLE READ transaction, whose statements share one
	// snapshot; on SQLite the default options, since any read transaction
	// does in WAL mode.
	Snapshot sql.TxOptions
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
	// to the page's 20. Empty on SQLite, where nothing is run (INDEXED BY
	// holds the plans there).
	CustomPlans string
	// IdleConns is how many idle connections the read pool keeps.
	IdleConns int
	// FlushIdleAfterFailure makes Ping close the idle connections after a
	// failure and try once more on a new one: pooled PostgreSQL
	// connections that the server ended while it was away would each fail
	// once. SQLite's connections open a file and cannot go stale.
	FlushIdleAfterFailure bool
}

func (d Dialect) minKey(column string) string { return fmt.Sprintf(d.SQL.MinKey, column) }
func (d Dialect) maxKey(column string) string { return fmt.Sprintf(d.SQL.MaxKey, column) }

// indexedBy is SQL.IndexedBy, and nothing for a table read by no
// particular index.
func (d Dialect) indexedBy(index string) string {
	if index == "" {
		return ""
	}
	return d.SQL.IndexedBy(index)
}
