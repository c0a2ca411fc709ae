package storetest_test

import (
	"context"
	"database/sql"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mailroom/mailroom"
	"github.com/mailroom/mailroom/postgres"
	"github.com/mailroom/mailroom/sqlite"
	"github.com/mailroom/mailroom/sqlstore"
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
			[]any{acctX, "a@x.example"}},
		{"messages_scheduled", `SELECT id FROM messages WHERE account_id = $1 AND status = 'scheduled'
			AND (scheduled_at, id) > ($2, $3) ORDER BY scheduled_at, id LIMIT 21`,
			[]any{acctX, int64(0), []byte{}}},
		{"recipients_due", `SELECT r.message_id FROM recipients r WHERE r.due_at <= $1 AND r.claim_token IS NULL
			ORDER BY r.due_at LIMIT 200`, []any{int64(0)}},
	}
	storetest.Each(t, func(t *testing.T, e storetest.Engine) {
		var db *sql.DB
		var explain string
		var s *sqlstore.Store // closed: it makes statements
		switch e.Name {
		case "sqlite":
			dir := t.TempDir()
			var err error
			s, err = sqlite.Open(ctx, dir)
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
			var err error
			s, err = postgres.Open(ctx, url)
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
		store := e.Open(t)
		for _, q := range queries {
			if p := plan(t, db, explain+q.query, q.args...); !strings.Contains(p, q.index) {
				t.Errorf("the query does not use %s:\n%s\nplan:\n%s", q.index, q.query, p)
			}
		}
		// Retention (sqlstore.DeleteExpiredMessages' query) walks the
		// oldest messages by the primary key, with no sort: there is no
		// index on created_at (migration 00014).
		pkey := map[string]string{"sqlite": "sqlite_autoindex_messages_1", "postgres": "messages_pkey"}[e.Name]
		if p := plan(t, db, explain+sqlstore.ExpiredMessagesQuery, int64(0), 500, keyX); !strings.Contains(p, pkey) ||
			strings.Contains(p, "TEMP B-TREE") || strings.Contains(p, "Sort") {
			t.Errorf("retention does not walk %s in order:\n%s", pkey, p)
		}
		// A webhook claim reads its deliveries' events by an index that
		// leads with the account and id (the primary key, on PostgreSQL
		// perhaps events_by_type, which has them too), not by a scan of
		// every event.
		epkey := map[string]string{"sqlite": "USING PRIMARY KEY", "postgres": "Index Cond: ((account_id = "}[e.Name]
		if p := plan(t, db, explain+sqlstore.ClaimedEventsQuery(3), acctX, keyX, acctX, keyX, acctX, keyX); !strings.Contains(p, epkey) ||
			strings.Contains(p, "SCAN events") || strings.Contains(p, "Seq Scan") {
			t.Errorf("a webhook claim does not read its events by %s:\n%s", epkey, p)
		}
		// Events are read with their message (sqlstore.withMessages): the
		// events by an index, and their messages by the primary key, with
		// no scan or hash of messages. (That each event's message is a
		// probe of that key, not a walk of it, shows on tables with rows:
		// TestEventReadsProbeTheirMessages.)
		for _, q := range eventQueries(t, s) {
			p := plan(t, db, explain+q.sql, q.args...)
			bad := []string{"Sort", "Seq Scan", "Hash", "Materialize"}
			want := []string{"messages_pkey on messages m"}
			if e.Name == "sqlite" {
				// (SCAN p is the reading of the page, in a co-routine.)
				bad = []string{"TEMP B-TREE", "SCAN events", "SCAN m"}
				want = []string{"SEARCH events USING", "SEARCH m USING INDEX sqlite_autoindex_messages_1 (id=?)"}
				if q.index != "" {
					want = append(want, "SEARCH events USING INDEX "+q.index)
				}
			}
			for _, b := range bad {
				if strings.Contains(p, b) {
					t.Errorf("%q in the plan of\n%s\nplan:\n%s", b, q.sql, p)
				}
			}
			for _, w := range want {
				if !strings.Contains(p, w) {
					t.Errorf("%q is not in the plan of\n%s\nplan:\n%s", w, q.sql, p)
				}
			}
		}
		// The email log, every filter and combinations: each statement
		// ListMessages may run (the count of each candidate driver, and the
		// page driven by each) walks its driver's index in id order, with
		// no sort (which would read every match) and no scan.
		for _, f := range logFilters() {
			// Walked oldest first from a message (how a client pages
			// back toward newer ones), the same indexes the other way.
			asc := f
			asc.OldestFirst, asc.NewerThan = true, "msg_01jz0000000000000000000000"
			for _, f := range []mailroom.MessageFilter{f, asc} {
				probes, lists, err := store.LogQueries(ctx, "acct_x", f, mailroom.Page{Cursor: "MTc2NDAwMDAwMDAwMDAwMC5tc2dfMDFqejAwMDAwMDAwMDAwMDAwMDAwMDAwMDA"})
				if err != nil {
					t.Fatal(err)
				}
				for _, q := range append(probes, lists...) {
					p := plan(t, db, explain+q.SQL, q.Args...)
					bad := []string{"Sort", "Seq Scan", "Hash", "Materialize"}
					if e.Name == "sqlite" {
						// (SCAN p is the count's reading of its own subquery.)
						bad = []string{"TEMP B-TREE", "SCAN m", "SCAN d", "SCAN x"}
					}
					for _, b := range bad {
						if strings.Contains(p, b) {
							t.Errorf("filter %+v: %q in the plan of\n%s\nplan:\n%s", f, b, q.SQL, p)
						}
					}
					want := q.Index
					if e.Name == "sqlite" && want == "message_tags_lookup" {
						// The table is its primary key (WITHOUT ROWID).
						want = "SEARCH d USING PRIMARY KEY"
					}
					if !strings.Contains(p, want) {
						t.Errorf("filter %+v: the query does not use %s:\n%s\nplan:\n%s", f, q.Index, q.SQL, p)
					}
				}
			}
		}
	})
}

// TestEventReadsProbeTheirMessages: each statement that reads events
// (sqlstore.EventQuery, EventsQuery and ClaimedEventsQuery) reads the
// message of each event it returns by one probe of the messages' primary
// key, on tables of a few thousand rows, where a walk of the key would
// cost more than a probe (PostgreSQL plans either on empty tables). Their
// statistics are those of the migrations' ANALYZE, of empty tables, as on
// a server without autovacuum.
func TestEventReadsProbeTheirMessages(t *testing.T) {
	storetest.Each(t, func(t *testing.T, e storetest.Engine) {
		ctx := context.Background()
		s, db := openWithSQL(t, e.Name)
		acct := storetest.NewAccount(t, s, "acme")
		at := time.Date(2026, 11, 1, 10, 0, 0, 0, time.UTC)
		for b := range 4 {
			var batch []*mailroom.Message
			for i := range 500 {
				n := b*500 + i
				batch = append(batch, storetest.NewMessage(acct, at.Add(time.Duration(n)*time.Millisecond), fmt.Sprintf("r%d@x.example", n)))
			}
			if _, err := s.AcceptMessages(ctx, batch); err != nil {
				t.Fatal(err)
			}
		}
		explain := map[string]string{"sqlite": "EXPLAIN QUERY PLAN ", "postgres": "EXPLAIN "}[e.Name]
		probe := map[string]string{"sqlite": "SEARCH m USING INDEX sqlite_autoindex_messages_1 (id=?)",
			"postgres": "Index Cond: (id = "}[e.Name]
		for _, q := range eventQueries(t, s) {
			p := plan(t, db, explain+q.sql, q.args...)
			if !strings.Contains(p, probe) || strings.Contains(p, "Seq Scan on messages") || strings.Contains(p, "Hash") ||
				strings.Contains(p, "SCAN m") {
				t.Errorf("the messages of the events are not read by a probe (%q) of\n%s\nplan:\n%s", probe, q.sql, p)
			}
		}
	})
}

// eventQuery is a statement that reads events, with its arguments.
type eventQuery struct {
	sql  string
	args []any
	// index is the index that must serve a filter of the events list on
	// SQLite, which has no statistics to choose it by; "" for none.
	index string
}

// eventQueries are the statements that read events with their messages:
// one event, a claim's three, and the events list with each filter, on
// the first page and past it.
func eventQueries(t *testing.T, s *sqlstore.Store) []eventQuery {
	out := []eventQuery{
		{sqlstore.EventQuery, []any{keyX, acctX}, ""},
		{sqlstore.ClaimedEventsQuery(3), []any{acctX, keyX, acctX, keyX, acctX, keyX}, ""},
	}
	since := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	for _, f := range []mailroom.EventFilter{{}, {Type: mailroom.EventEmailBounced}, {Type: mailroom.EventEmailQueued},
		{MessageID: "msg_01jz0000000000000000000000"},
		{Since: &since}, {Type: mailroom.EventEmailDelivered, Since: &since}} {
		for _, page := range []mailroom.Page{{}, {Cursor: "MTc2NDAwMDAwMDAwMDAwMC5ldnRfMDFqejAwMDAwMDAwMDAwMDAwMDAwMDAwMDA"}} {
			q, args, _, err := s.EventsQuery(acctX, f, page)
			if err != nil {
				t.Fatal(err)
			}
			index := ""
			switch {
			case f.MessageID != "":
				index = "events_by_message"
			case f.Type != "" && f.Type != mailroom.EventEmailQueued:
				index = "events_by_type"
			}
			out = append(out, eventQuery{q, args, index})
		}
	}
	return out
}

// acctX is a stored account key (migration 00016), and keyX a stored
// message or event key (16 bytes, 00015), for the plans' arguments.
var (
	acctX = int64(1)
	keyX  = []byte("0123456789abcdef")
)

// logFilters are the email log's filters, alone and combined.
func logFilters() []mailroom.MessageFilter {
	at := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	later := at.Add(24 * time.Hour)
	tag := []mailroom.TagFilter{{Key: "kind", Value: "receipt"}}
	tags := []mailroom.TagFilter{{Key: "campaign", Value: "c1"}, {Key: "kind", Value: "receipt"}}
	return []mailroom.MessageFilter{
		{},
		{Status: mailroom.MessageFailed},
		{From: "A@x.example"},
		{To: "B@y.example"},
		{Tags: tag},
		{Tags: tags},
		{Category: mailroom.CategoryMarketing},
		{Template: "welcome"},
		{Template: "tpl_01jz0000000000000000000000"},
		{Since: &at},
		{Until: &later},
		{Since: &at, Until: &later},
		{Status: mailroom.MessageFailed, Tags: tag, Until: &later},
		{From: "a@x.example", To: "b@y.example", Since: &at},
		{To: "b@y.example", Tags: tags, Status: mailroom.MessageDelivered, Category: mailroom.CategoryMarketing},
		{Template: "welcome", From: "a@x.example", Status: mailroom.MessageQueued, Since: &at, Until: &later},
		// ?event= (issue 33): messages_opened and messages_clicked.
		{Event: mailroom.EngagementOpened},
		{Event: mailroom.EngagementClicked, Since: &at},
		{Event: mailroom.EngagementOpened, To: "b@y.example", Status: mailroom.MessageDelivered},
		{Event: mailroom.EngagementClicked, Tags: tag, Category: mailroom.CategoryMarketing},
	}
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
