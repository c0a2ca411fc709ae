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

// TestQueriesUseTheirIndexes: the queries whose cost must not grow with
// the tables have an index to serve them, on both engines.
//   - The log's ?from= matches any case through lower(from_address),
//     an expression only messages_by_from_key (migration 00007) serves.
//   - GET /v1/scheduled pages an account's scheduled messages soonest
//     first through the partial index messages_scheduled (00009): a
//     million sent messages are not read to find ten scheduled ones.
//   - The claim finds due recipients through the partial index
//     recipients_due: a million scheduled for later are not read to find
//     the few due now.
func TestQueriesUseTheirIndexes(t *testing.T) {
	ctx := context.Background()
	queries := []struct {
		index, query string
		args         []any
	}{
		{"messages_by_from_key", `SELECT id FROM messages WHERE account_id = $1 AND lower(from_address) = $2 ORDER BY id DESC LIMIT 21`,
			[]any{"acct_x", "a@x.example"}},
		{"messages_scheduled", `SELECT id FROM messages WHERE account_id = $1 AND status = 'scheduled'
			AND (scheduled_at, id) > ($2, $3) ORDER BY scheduled_at, id LIMIT 21`,
			[]any{"acct_x", int64(0), ""}},
		{"recipients_due", `SELECT r.message_id FROM recipients r WHERE r.due_at <= $1 AND r.claim_token IS NULL
			ORDER BY r.due_at LIMIT 200`, []any{int64(0)}},
	}
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
			explain = "EXPLAIN QUERY PLAN "
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
			explain = "EXPLAIN "
		}
		defer db.Close()
		for _, q := range queries {
			if p := plan(t, db, explain+q.query, q.args...); !strings.Contains(p, q.index) {
				t.Errorf("the query does not use %s:\n%s\nplan:\n%s", q.index, q.query, p)
			}
		}
	})
}

func plan(t *testing.T, db *sql.DB, explain string, args ...any) string {
	t.Helper()
	rows, err := db.QueryContext(context.Background(), explain, args...)
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
	return strings.Join(plan, "\n")
}
