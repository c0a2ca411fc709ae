// Package storetest holds the storage conformance suite, which every
// engine must pass (in the manner of River's riverdrivertest), and the
// helpers that let any test run against each engine.
package storetest

import (
	"context"
	"crypto/rand"
	"database/sql"
	"fmt"
	"net/url"
	"os"
	"strings"
	"testing"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib" // registers the "pgx" driver for admin statements

	"github.com/mailroom/mailroom/postgres"
	"github.com/mailroom/mailroom/require"
	"github.com/mailroom/mailroom/sqlite"
	"github.com/mailroom/mailroom/sqlstore"
)

// EnvDatabaseURL names the variable holding an administrative PostgreSQL
// URL. Each test gets a database of its own, created and dropped through it.
const EnvDatabaseURL = "MAILROOM_TEST_DATABASE_URL"

// Engine is one storage engine under test.
type Engine struct {
	Name string
	// Storage returns the flags that point the mailroom binary at a fresh,
	// empty store: a fresh PostgreSQL database, or nothing for SQLite (the
	// data directory holds it).
	Storage func(t testing.TB) []string
	// Open returns a fresh, migrated store, closed when the test ends.
	Open func(t testing.TB) *sqlstore.Store
}

// Each runs fn once per engine as a subtest. PostgreSQL is skipped, saying
// why, when EnvDatabaseURL is not set (or fails, under MAILROOM_REQUIRE=postgres).
func Each(t *testing.T, fn func(t *testing.T, e Engine)) {
	t.Run("sqlite", func(t *testing.T) { fn(t, SQLite) })
	t.Run("postgres", func(t *testing.T) {
		RequirePostgres(t)
		fn(t, Postgres)
	})
}

// RequirePostgres skips the test, saying why, when EnvDatabaseURL is not
// set; it fails it instead under MAILROOM_REQUIRE=postgres, as in CI.
func RequirePostgres(t testing.TB) {
	t.Helper()
	if os.Getenv(EnvDatabaseURL) == "" {
		require.Missing(t, require.Postgres, "PostgreSQL skipped: set %s (CI does when PostgreSQL answers on 127.0.0.1:5432)", EnvDatabaseURL)
	}
}

// SQLite is the embedded engine, a file in a temporary data directory.
var SQLite = Engine{
	Name:    "sqlite",
	Storage: func(testing.TB) []string { return nil },
	Open: func(t testing.TB) *sqlstore.Store {
		s, err := sqlite.Open(context.Background(), t.TempDir())
		if err != nil {
			t.Fatalf("open sqlite: %v", err)
		}
		t.Cleanup(func() { s.Close() })
		return s
	},
}

// Postgres is the shared engine, a fresh database per call.
var Postgres = Engine{
	Name:    "postgres",
	Storage: func(t testing.TB) []string { return []string{"--database-url", NewPostgresDatabase(t)} },
	Open: func(t testing.TB) *sqlstore.Store {
		s, err := postgres.Open(context.Background(), NewPostgresDatabase(t))
		if err != nil {
			t.Fatalf("open postgres: %v", err)
		}
		t.Cleanup(func() { s.Close() })
		return s
	},
}

// NewPostgresDatabase creates an empty database and returns its URL; the
// database is dropped when the test ends.
func NewPostgresDatabase(t testing.TB) string {
	t.Helper()
	RequirePostgres(t)
	admin := os.Getenv(EnvDatabaseURL)
	name := "mailroom_test_" + strings.ToLower(rand.Text()[:12])
	db, err := sql.Open("pgx", admin)
	if err != nil {
		t.Fatalf("postgres admin connection: %v", err)
	}
	defer db.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := db.ExecContext(ctx, "CREATE DATABASE "+name); err != nil {
		t.Fatalf("create database: %v", err)
	}
	t.Cleanup(func() {
		db, err := sql.Open("pgx", admin)
		if err != nil {
			return
		}
		defer db.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if _, err := db.ExecContext(ctx, "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)"); err != nil {
			t.Logf("drop database %s: %v", name, err)
		}
	})
	u, err := url.Parse(admin)
	if err != nil {
		t.Fatalf("%s is not a URL: %v", EnvDatabaseURL, err)
	}
	u.Path = "/" + name
	return u.String()
}

// Result holds a value and an error, so that a call's two results can be
// checked in one expression: Try(s.APIKey(ctx, id)).Must(t).
type Result[T any] struct {
	v   T
	err error
}

// Try captures the results of a call.
func Try[T any](v T, err error) Result[T] { return Result[T]{v, err} }

// Must fails the test if the call failed, and returns its value.
func (r Result[T]) Must(t testing.TB) T {
	t.Helper()
	if r.err != nil {
		t.Fatal(fmt.Sprint(r.err))
	}
	return r.v
}

// PageResult holds a page, its next cursor and an error.
type PageResult[T any] struct {
	items []T
	next  string
	err   error
}

// Try2 captures the results of a List call.
func Try2[T any](items []T, next string, err error) PageResult[T] {
	return PageResult[T]{items, next, err}
}

// Must fails the test if the call failed, and returns the page and cursor.
func (r PageResult[T]) Must(t testing.TB) ([]T, string) {
	t.Helper()
	if r.err != nil {
		t.Fatal(fmt.Sprint(r.err))
	}
	return r.items, r.next
}
