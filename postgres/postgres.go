// Package postgres opens Mailroom's shared storage: a PostgreSQL database
// that any number of nodes use at once, through jackc/pgx, and serves it
// through package sqlstore.
package postgres

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"net"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/stdlib"
	"github.com/pressly/goose/v3"
	"github.com/pressly/goose/v3/lock"

	"github.com/mailroom/mailroom/sqlstore"
)

//go:embed migrations/*.sql
var migrations embed.FS

// Open connects to the database at url and applies the migrations it lacks.
func Open(ctx context.Context, url string) (*sqlstore.Store, error) {
	s, _, err := open(ctx, url)
	return s, err
}

// open is Open, and returns the versions of the migrations it applied.
func open(ctx context.Context, url string) (*sqlstore.Store, []int64, error) {
	cfg, err := pgconnConfig(url)
	if err != nil {
		return nil, nil, err
	}
	db := stdlib.OpenDB(*cfg)
	db.SetMaxOpenConns(20)
	db.SetMaxIdleConns(dialect.Reads.IdleConns)
	if err := db.PingContext(ctx); err != nil {
		db.Close()
		return nil, nil, fmt.Errorf("connect to PostgreSQL: %w", err)
	}
	applied, err := migrate(ctx, db)
	if err != nil {
		db.Close()
		return nil, nil, err
	}
	s := sqlstore.New(db, db, dialect)
	s.SetMigrationLock(func(ctx context.Context) (func(), error) { return lockMigrations(ctx, db) })
	return s, applied, nil
}

// Migrate applies the migrations the database at url lacks and returns
// their versions, in order (none when it was up to date).
func Migrate(ctx context.Context, url string) ([]int64, error) {
	s, applied, err := open(ctx, url)
	if err != nil {
		return nil, err
	}
	return applied, s.Close()
}

// migrate applies the embedded migrations under a PostgreSQL advisory lock
// held for the session, so that nodes starting at once apply each migration
// exactly once and the others wait for it.
func migrate(ctx context.Context, db *sql.DB) ([]int64, error) {
	locker, err := lock.NewPostgresSessionLocker()
	if err != nil {
		return nil, err
	}
	sub, err := fs.Sub(migrations, "migrations")
	if err != nil {
		return nil, err
	}
	p, err := goose.NewProvider(goose.DialectPostgres, db, sub, goose.WithSessionLocker(locker))
	if err != nil {
		return nil, fmt.Errorf("migrations: %w", err)
	}
	applied, err := sqlstore.ApplyMigrations(ctx, p, db, dialect.SQL.NowMicros)
	if err != nil {
		return nil, err
	}
	if len(applied) > 0 {
		// Fresh statistics for the planner: a migration adds indexes and
		// may rewrite tables, and a server with autovacuum off (or not
		// yet run) would otherwise plan the log's queries on none, or on
		// those of empty tables (issue 17). ANALYZE samples a bounded
		// number of rows per table, so it takes seconds at most.
		if _, err := db.ExecContext(ctx, "ANALYZE"); err != nil {
			return nil, fmt.Errorf("analyze after migrations: %w", err)
		}
	}
	return applied, nil
}

// lockMigrations takes the advisory lock goose applies migrations under
// (lock.DefaultLockID), on a connection of its own held until the returned
// release, so that what is done under it excludes any node migrating the
// database. pg_advisory_lock waits in the server and returns as soon as
// the lock is free, where goose's locker polls every 5 s.
func lockMigrations(ctx context.Context, db *sql.DB) (unlock func(), err error) {
	conn, err := db.Conn(ctx)
	if err != nil {
		return nil, err
	}
	if _, err := conn.ExecContext(ctx, "SELECT pg_advisory_lock($1)", lock.DefaultLockID); err != nil {
		conn.Close()
		return nil, fmt.Errorf("take the migration lock: %w", err)
	}
	return func() {
		// A release that fails (the connection broke) is a release too:
		// PostgreSQL drops a session's advisory locks with the session.
		_, _ = conn.ExecContext(context.WithoutCancel(ctx), "SELECT pg_advisory_unlock($1)", lock.DefaultLockID)
		conn.Close()
	}, nil
}

// customPlans is Dialect.Reads.CustomPlans: settings local to the log's
// transaction, in one statement (one round trip).
const customPlans = `SELECT set_config('plan_cache_mode', 'force_custom_plan', true),
	set_config('enable_sort', 'off', true), set_config('enable_bitmapscan', 'off', true),
	set_config('enable_hashjoin', 'off', true), set_config('enable_mergejoin', 'off', true),
	set_config('enable_material', 'off', true), set_config('max_parallel_workers_per_gather', '0', true)`

// dialect is what PostgreSQL does its own way.
var dialect = sqlstore.Dialect{
	Name: "postgres",
	Errors: sqlstore.Errors{
		UniqueViolation: func(err error) bool {
			var e *pgconn.PgError
			return errors.As(err, &e) && e.Code == "23505"
		},
		Conflict: func(err error) bool {
			var e *pgconn.PgError
			return errors.As(err, &e) && (e.Code == "40P01" || e.Code == "40001")
		},
		Unavailable: isUnavailable,
	},
	SQL: sqlstore.Fragments{
		// clock_timestamp(), not now(): now() is the start of the transaction.
		NowMicros: "(extract(epoch from clock_timestamp()) * 1000000)::bigint",
		DomainOf:  func(col string) string { return "lower(substring(" + col + " from '[^@]*$'))" },
		MinKey:    "min(%s::text)",
		MaxKey:    "max(%s::text)",
		// The identity column's sequence (migration 00016).
		NewAccountKey: "DEFAULT",
		// The planner has statistics; CustomPlans holds it to the log's plans.
		IndexedBy: func(string) string { return "" },
	},
	Locks: sqlstore.Locks{SkipLocked: " FOR UPDATE SKIP LOCKED", Rows: " FOR UPDATE"},
	Writes: sqlstore.Writes{
		Committers:   4,
		ArrayInserts: true,
	},
	Reads: sqlstore.Reads{
		Snapshot:              sql.TxOptions{Isolation: sql.LevelRepeatableRead, ReadOnly: true},
		CustomPlans:           customPlans,
		IdleConns:             20,
		FlushIdleAfterFailure: true,
	},
}

// isUnavailable is Dialect.Errors.Unavailable.
func isUnavailable(err error) bool {
	// Any failure to connect first: the server's refusal then comes as
	// a PgError inside (55000 "database is not currently accepting
	// connections", 57P03 "the database system is starting up", …),
	// whose code alone would not say so.
	var connectErr *pgconn.ConnectError
	if errors.As(err, &connectErr) {
		return true
	}
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		// Class 08: connection exception; 53: insufficient resources;
		// 57P0x: the server is shutting down, restarting, or ended
		// this connection (pg_terminate_backend).
		return pgErr.Code[:2] == "08" || pgErr.Code[:2] == "53" || pgErr.Code[:4] == "57P0"
	}
	var netErr net.Error
	return errors.As(err, &netErr) || pgconn.SafeToRetry(err) || errors.Is(err, driver.ErrBadConn)
}
