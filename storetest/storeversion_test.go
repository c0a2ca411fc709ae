package storetest_test

import (
	"context"
	"database/sql"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mailroom/mailroom/postgres"
	"github.com/mailroom/mailroom/sqlite"
	"github.com/mailroom/mailroom/storetest"
)

// TestNewerStoreIsRefused: a store that a newer Mailroom migrated is
// refused at open, saying so, rather than served by a binary that would
// misread its rows (as one from before migration 00015 misreads keys as
// text). The newer migration is stood in for by its row in goose's table.
func TestNewerStoreIsRefused(t *testing.T) {
	ctx := context.Background()
	storetest.Each(t, func(t *testing.T, e storetest.Engine) {
		var reopen func() error
		var driver, dsn string
		switch e.Name {
		case "sqlite":
			dir := t.TempDir()
			driver, dsn = "sqlite", "file:"+filepath.Join(dir, sqlite.FileName)
			reopen = func() error {
				s, err := sqlite.Open(ctx, dir)
				if err == nil {
					s.Close()
				}
				return err
			}
		case "postgres":
			url := storetest.NewPostgresDatabase(t)
			driver, dsn = "pgx", url
			reopen = func() error {
				s, err := postgres.Open(ctx, url)
				if err == nil {
					s.Close()
				}
				return err
			}
		}
		if err := reopen(); err != nil {
			t.Fatal(err)
		}
		db, err := sql.Open(driver, dsn)
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		if _, err := db.ExecContext(ctx, `INSERT INTO goose_db_version (version_id, is_applied) VALUES (9999, true)`); err != nil {
			t.Fatal(err)
		}
		err = reopen()
		if err == nil || !strings.Contains(err.Error(), "newer Mailroom") {
			t.Fatalf("opening a store migrated to 9999: %v; want a refusal naming a newer Mailroom", err)
		}
	})
}
