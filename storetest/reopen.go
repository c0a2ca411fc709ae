package storetest

import (
	"context"
	"database/sql"
	"path/filepath"
	"testing"

	"github.com/mailroom/mailroom/postgres"
	"github.com/mailroom/mailroom/sqlite"
	"github.com/mailroom/mailroom/sqlstore"
)

// Reopenable gives a test one fresh database of engine e two ways: open,
// which opens (and migrates) a store over it each time it is called, each
// closed when the test ends; and db, a plain connection to it beside any
// store, for what only SQL can do (age a heartbeat, read the schema).
func Reopenable(t testing.TB, e Engine) (open func() *sqlstore.Store, db *sql.DB) {
	t.Helper()
	ctx := context.Background()
	var openStore func() (*sqlstore.Store, error)
	var err error
	switch e.Name {
	case "sqlite":
		dir := t.TempDir()
		openStore = func() (*sqlstore.Store, error) { return sqlite.Open(ctx, dir) }
		db, err = sql.Open("sqlite", "file:"+filepath.Join(dir, sqlite.FileName)+"?_pragma=busy_timeout(10000)")
	case "postgres":
		url := NewPostgresDatabase(t)
		openStore = func() (*sqlstore.Store, error) { return postgres.Open(ctx, url) }
		db, err = sql.Open("pgx", url)
	default:
		t.Fatalf("no engine %q", e.Name)
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return func() *sqlstore.Store {
		t.Helper()
		s, err := openStore()
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		return s
	}, db
}
