package sqlstore

import (
	"context"
	"database/sql"
	"sync"
)

// stmtCache keeps one prepared statement per query text: parsing SQL cost
// about a fifth of the CPU of an accept on SQLite before it. database/sql
// re-prepares a statement on each pooled connection once and reuses it.
//
// A miss never prepares on the spot: inside a transaction on SQLite's one
// write connection, preparing on the pool would wait for the very
// connection the transaction holds. The caller runs the query unprepared
// this time, and the statement is prepared in the background, once, as
// soon as a connection is free.
type stmtCache struct {
	db      *sql.DB
	mu      sync.Mutex
	m       map[string]*sql.Stmt
	pending map[string]bool
	closed  bool
}

func newStmtCache(db *sql.DB) *stmtCache {
	return &stmtCache{db: db, m: map[string]*sql.Stmt{}, pending: map[string]bool{}}
}

// get returns the prepared statement for query, or nil on a miss.
func (c *stmtCache) get(query string) *sql.Stmt {
	c.mu.Lock()
	defer c.mu.Unlock()
	if st, ok := c.m[query]; ok || c.closed || c.pending[query] {
		return st
	}
	c.pending[query] = true
	go func() {
		st, err := c.db.Prepare(query)
		c.mu.Lock()
		defer c.mu.Unlock()
		delete(c.pending, query)
		switch {
		case err != nil:
		case c.closed:
			st.Close()
		default:
			c.m[query] = st
		}
	}()
	return nil
}

func (c *stmtCache) close() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.closed = true
	for _, st := range c.m {
		st.Close()
	}
	c.m = map[string]*sql.Stmt{}
}

// txExec runs a query inside tx, prepared once it is cached.
func (s *Store) txExec(ctx context.Context, tx *sql.Tx, query string, args ...any) (sql.Result, error) {
	if st := s.writeStmts.get(query); st != nil {
		return tx.StmtContext(ctx, st).ExecContext(ctx, args...)
	}
	return tx.ExecContext(ctx, query, args...)
}

// txQuery runs a query inside tx, prepared once it is cached.
func (s *Store) txQuery(ctx context.Context, tx *sql.Tx, query string, args ...any) (*sql.Rows, error) {
	if st := s.writeStmts.get(query); st != nil {
		return tx.StmtContext(ctx, st).QueryContext(ctx, args...)
	}
	return tx.QueryContext(ctx, query, args...)
}

// txQueryRow runs a single-row query inside tx, prepared once it is cached.
func (s *Store) txQueryRow(ctx context.Context, tx *sql.Tx, query string, args ...any) *sql.Row {
	if st := s.writeStmts.get(query); st != nil {
		return tx.StmtContext(ctx, st).QueryRowContext(ctx, args...)
	}
	return tx.QueryRowContext(ctx, query, args...)
}

// readRow runs a single-row query on the read pool, prepared once cached.
func (s *Store) readRow(ctx context.Context, query string, args ...any) *sql.Row {
	if st := s.readStmts.get(query); st != nil {
		return st.QueryRowContext(ctx, args...)
	}
	return s.read.QueryRowContext(ctx, query, args...)
}

// readQuery runs a query on the read pool, prepared once cached.
func (s *Store) readQuery(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	if st := s.readStmts.get(query); st != nil {
		return st.QueryContext(ctx, args...)
	}
	return s.read.QueryContext(ctx, query, args...)
}
