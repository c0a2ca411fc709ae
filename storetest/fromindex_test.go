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

// TestFromFilterUsesIndex: the log's ?from= matches any case through
// lower(from_address); the migrations must give that expression an index,
// or the filter would read every message of the account.
func TestFromFilterUsesIndex(t *testing.T) {
	ctx := context.Background()
	const query = `SELECT id FROM messages WHERE account_id = $1 AND lower(from_address) = $2 ORDER BY id DESC LIMIT 21`
	storetest.Each(t, func(t *testing.T, e storetest.Engine) {
		var db *sql.DB
		var explain string
		switch e.Name {
		case "sqlite":
			dir := t.TempDir()
			s, err := sqlite.Open(ctx, dir)
			if err != nil {
				t.Fatal(err)
			}
			s.Close()
			if db, err = sql.Open("sqlite", "file:"+filepath.Join(dir, sqlite.FileName)); err != nil {
				t.Fatal(err)
			}
			explain = "EXPLAIN QUERY PLAN " + query
		case "postgres":
			url := storetest.NewPostgresDatabase(t)
			s, err := postgres.Open(ctx, url)
			if err != nil {
				t.Fatal(err)
			}
			s.Close()
			if db, err = sql.Open("pgx", url); err != nil {
				t.Fatal(err)
			}
			// An empty table is cheaper to scan: ask whether an index can
			// serve the filter at all.
			db.SetMaxOpenConns(1)
			if _, err := db.ExecContext(ctx, "SET enable_seqscan = off"); err != nil {
				t.Fatal(err)
			}
			explain = "EXPLAIN " + query
		}
		defer db.Close()
		rows, err := db.QueryContext(ctx, explain, "acct_x", "a@x.example")
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		cols, _ := rows.Columns()
		var plan []string
		for rows.Next() {
			vals := make([]any, len(cols))
			ptrs := make([]any, len(cols))
			for i := range vals {
				ptrs[i] = &vals[i]
			}
			if err := rows.Scan(ptrs...); err != nil {
				t.Fatal(err)
			}
			for _, v := range vals {
				if s, ok := v.(string); ok {
					plan = append(plan, s)
				}
			}
		}
		if p := strings.Join(plan, "\n"); !strings.Contains(p, "messages_by_from_key") {
			t.Fatalf("the from filter does not use messages_by_from_key:\n%s", p)
		}
	})
}
