package storetest_test

import (
	"context"
	"encoding/base64"
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mailroom/mailroom"
	"github.com/mailroom/mailroom/storetest"
)

// EnvScale names the variable that turns TestLogScale on: the number of
// messages to store (1000000 for the figures of BENCHMARKS.md).
const EnvScale = "MAILROOM_SCALE"

// TestLogScale fills a store with MAILROOM_SCALE messages through the
// store's accept path (batches of 500, as POST /v1/send/batch does) and
// times GET /v1/messages's query for each filter of the email log and
// combinations of them, first pages and pages deep behind a cursor, on
// each engine: p50 and p99 of the store's ListMessages, default page (20).
// Every filter must do work in proportion to the page, not to its matches
// (issue 17, item 3): the aim is a p99 under 50 ms at a million.
//
// The messages span 30 days, one recipient each, from 100 senders; each
// has the tags kind (10 values: 10% each), campaign (100 values: 1% each)
// and order (2 messages a value); a tenth go to ops@example.net, the rest
// to one of N/20 addresses (20 messages each); 20% are marketing; 5% come
// from the template "welcome". After the fill, statuses are set by SQL as
// delivery would leave them: 85% delivered, 8% queued, 5% bounced, 1%
// failed, 1% deferred. Attributes are drawn independently from a seeded
// generator, so that they are not correlated and runs store the same.
//
// ANALYZE runs after the fill, as autovacuum would have on PostgreSQL (the
// test server here has it off) and as the planner of SQLite never needs
// (ListMessages forces its index there); MAILROOM_SCALE_ANALYZE=0 skips
// it, to see PostgreSQL planning on the statistics of the empty tables
// that ANALYZE after the migrations left.
func TestLogScale(t *testing.T) {
	n, _ := strconv.Atoi(os.Getenv(EnvScale))
	if n <= 0 {
		t.Skip("the log's scale benchmark: set " + EnvScale + "=1000000 (minutes per engine) to run it")
	}
	for _, eng := range []string{"sqlite", "postgres"} {
		t.Run(eng, func(t *testing.T) {
			if eng == "postgres" {
				storetest.RequirePostgres(t)
			}
			if only := os.Getenv("MAILROOM_SCALE_ENGINE"); only != "" && only != eng {
				t.Skip("MAILROOM_SCALE_ENGINE=" + only)
			}
			runLogScale(t, eng, n)
		})
	}
}

func runLogScale(t *testing.T, eng string, n int) {
	ctx := context.Background()
	s, db := openWithSQL(t, eng)
	acct := storetest.NewAccount(t, s, "scale")
	const span = 30 * 24 * time.Hour
	base := time.Now().Add(-span).Truncate(time.Second)
	step := span / time.Duration(n)
	step = step.Truncate(100 * time.Microsecond)
	rng := rand.New(rand.NewPCG(17, 3))
	// The status bucket (0-99) rides in created_at's last two digits
	// (microseconds, well inside one step), for the UPDATE below.
	buckets := make([]int, n)
	for i := range buckets {
		buckets[i] = rng.IntN(100)
	}
	at := func(i int) time.Time {
		return base.Add(time.Duration(i)*step + time.Duration(buckets[i])*time.Microsecond)
	}
	ids := make([]string, n)
	var user string

	start := time.Now()
	const batch = 500
	for from := 0; from < n; from += batch {
		ms := make([]*mailroom.Message, 0, batch)
		for i := from; i < min(n, from+batch); i++ {
			to := fmt.Sprintf("user%d@example.net", rng.IntN(max(1, n/20)))
			if rng.IntN(10) == 0 {
				to = "ops@example.net"
			}
			if i == n/2 {
				user = to
			}
			m := storetest.NewMessage(acct, at(i), to)
			m.From.Address = fmt.Sprintf("sender%d@shop.example", rng.IntN(100))
			m.Tags = map[string]string{
				"kind":     fmt.Sprintf("k%d", rng.IntN(10)),
				"campaign": fmt.Sprintf("c%d", rng.IntN(100)),
				"order":    fmt.Sprintf("o%d", i/2),
			}
			if rng.IntN(5) == 0 {
				m.Category = mailroom.CategoryMarketing
			}
			if rng.IntN(20) == 0 {
				m.Template = &mailroom.TemplateRef{ID: "tpl_01jz000000000000000000welc", Name: "welcome", Version: 1}
			}
			ids[i] = m.ID
			ms = append(ms, m)
		}
		if _, err := s.AcceptMessages(ctx, ms); err != nil {
			t.Fatal(err)
		}
	}
	fill := time.Since(start)
	t.Logf("%s: accepted %d messages in %v (%.0f/s)", eng, n, fill.Round(time.Second), float64(n)/fill.Seconds())
	// Statuses as delivery would leave them, by the bucket in created_at.
	start = time.Now()
	if _, err := db.ExecContext(ctx, `UPDATE messages SET status = CASE
		WHEN created_at % 100 < 85 THEN 'delivered'
		WHEN created_at % 100 < 93 THEN 'queued'
		WHEN created_at % 100 < 98 THEN 'bounced'
		WHEN created_at % 100 < 99 THEN 'failed'
		ELSE 'deferred' END`); err != nil {
		t.Fatal(err)
	}
	t.Logf("%s: statuses set in %v", eng, time.Since(start).Round(time.Second))
	if os.Getenv("MAILROOM_SCALE_ANALYZE") != "0" {
		if _, err := db.ExecContext(ctx, `ANALYZE`); err != nil {
			t.Fatal(err)
		}
	}
	var failed, delivered int
	if err := db.QueryRowContext(ctx, `SELECT
		(SELECT count(*) FROM messages WHERE status = 'failed'),
		(SELECT count(*) FROM messages WHERE status = 'delivered')`).Scan(&failed, &delivered); err != nil {
		t.Fatal(err)
	}
	t.Logf("%s: %d failed, %d delivered", eng, failed, delivered)

	ptr := func(t time.Time) *time.Time { return &t }
	tag := func(kv ...string) []mailroom.TagFilter {
		var out []mailroom.TagFilter
		for i := 0; i < len(kv); i += 2 {
			out = append(out, mailroom.TagFilter{Key: kv[i], Value: kv[i+1]})
		}
		return out
	}
	// A store cursor at message i: the next page starts just older.
	cursorAt := func(i int) string {
		return base64.RawURLEncoding.EncodeToString([]byte(strconv.FormatInt(at(i).UnixMicro(), 10) + "." + ids[i]))
	}
	oldest, mid, newest := at(n/1000), at(n/2), at(n-n/100)
	cases := []struct {
		name   string
		f      mailroom.MessageFilter
		cursor string
	}{
		{"none", mailroom.MessageFilter{}, ""},
		{"none, cursor at 50%", mailroom.MessageFilter{}, cursorAt(n / 2)},
		{"none, cursor at 0.1%", mailroom.MessageFilter{}, cursorAt(n / 1000)},
		{"status=delivered (85%)", mailroom.MessageFilter{Status: mailroom.MessageDelivered}, ""},
		{"status=failed (1%)", mailroom.MessageFilter{Status: mailroom.MessageFailed}, ""},
		{"status=failed, cursor at 50%", mailroom.MessageFilter{Status: mailroom.MessageFailed}, cursorAt(n / 2)},
		{"from (1%)", mailroom.MessageFilter{From: "Sender7@shop.example"}, ""},
		{"to (20 messages)", mailroom.MessageFilter{To: user}, ""},
		{"to=ops (10%)", mailroom.MessageFilter{To: "ops@example.net"}, ""},
		{"to=ops, cursor at 50%", mailroom.MessageFilter{To: "ops@example.net"}, cursorAt(n / 2)},
		{"tag kind (10%)", mailroom.MessageFilter{Tags: tag("kind", "k3")}, ""},
		{"tag kind, cursor at 50%", mailroom.MessageFilter{Tags: tag("kind", "k3")}, cursorAt(n / 2)},
		{"tag campaign (1%)", mailroom.MessageFilter{Tags: tag("campaign", "c42")}, ""},
		{"tag order (2 messages)", mailroom.MessageFilter{Tags: tag("order", fmt.Sprintf("o%d", n/4))}, ""},
		{"tag none match", mailroom.MessageFilter{Tags: tag("kind", "nothing")}, ""},
		{"tags kind+campaign (0.1%)", mailroom.MessageFilter{Tags: tag("campaign", "c42", "kind", "k3")}, ""},
		{"category=marketing (20%)", mailroom.MessageFilter{Category: mailroom.CategoryMarketing}, ""},
		{"template=welcome (5%)", mailroom.MessageFilter{Template: "welcome"}, ""},
		{"since last 1%", mailroom.MessageFilter{Since: ptr(newest)}, ""},
		{"since 50%", mailroom.MessageFilter{Since: ptr(mid)}, ""},
		{"until 0.1% (oldest)", mailroom.MessageFilter{Until: ptr(oldest)}, ""},
		{"until 50%", mailroom.MessageFilter{Until: ptr(mid)}, ""},
		{"since+until, one day at 50%", mailroom.MessageFilter{Since: ptr(mid), Until: ptr(mid.Add(24 * time.Hour))}, ""},
		{"status=failed+tag kind", mailroom.MessageFilter{Status: mailroom.MessageFailed, Tags: tag("kind", "k3")}, ""},
		{"status=delivered+tag kind", mailroom.MessageFilter{Status: mailroom.MessageDelivered, Tags: tag("kind", "k3")}, ""},
		{"tag kind+until 0.1%", mailroom.MessageFilter{Tags: tag("kind", "k3"), Until: ptr(oldest)}, ""},
		{"tag kind+since last 1%", mailroom.MessageFilter{Tags: tag("kind", "k3"), Since: ptr(newest)}, ""},
		{"status=failed+until 0.1%", mailroom.MessageFilter{Status: mailroom.MessageFailed, Until: ptr(oldest)}, ""},
		{"from+status=failed", mailroom.MessageFilter{From: "sender7@shop.example", Status: mailroom.MessageFailed}, ""},
		{"from+tag kind", mailroom.MessageFilter{From: "sender7@shop.example", Tags: tag("kind", "k3")}, ""},
		{"to=ops+tag kind", mailroom.MessageFilter{To: "ops@example.net", Tags: tag("kind", "k3")}, ""},
		{"to=ops+status=failed", mailroom.MessageFilter{To: "ops@example.net", Status: mailroom.MessageFailed}, ""},
		{"category+status=failed", mailroom.MessageFilter{Category: mailroom.CategoryMarketing, Status: mailroom.MessageFailed}, ""},
		{"template+tag kind", mailroom.MessageFilter{Template: "welcome", Tags: tag("kind", "k3")}, ""},
		{"from+until 0.1%", mailroom.MessageFilter{From: "sender7@shop.example", Until: ptr(oldest)}, ""},
		{"to=ops+until 0.1%", mailroom.MessageFilter{To: "ops@example.net", Until: ptr(oldest)}, ""},
	}
	var report strings.Builder
	fmt.Fprintf(&report, "\n%s, N=%d: p50 / p99 ms (runs, messages on the page)\n", eng, n)
	for _, c := range cases {
		list := func() int {
			page, _, err := s.ListMessages(ctx, acct.ID, c.f, mailroom.Page{Cursor: c.cursor})
			if err != nil {
				t.Fatalf("%s: %v", c.name, err)
			}
			return len(page)
		}
		got := list() // warm up: prepared statements, page cache
		var times []time.Duration
		began := time.Now()
		for len(times) < 200 && (len(times) < 5 || time.Since(began) < 2*time.Second) {
			t0 := time.Now()
			list()
			times = append(times, time.Since(t0))
		}
		slices.Sort(times)
		p := func(q float64) float64 {
			return float64(times[min(len(times)-1, int(q*float64(len(times))))].Microseconds()) / 1000
		}
		fmt.Fprintf(&report, "| %-32s | %8.1f | %8.1f | %3d runs, %2d listed\n", c.name, p(0.5), p(0.99), len(times), got)
	}
	t.Log(report.String())

	// The plans of a few, by each candidate driver (ListMessages runs the
	// one its counts choose).
	explain := "EXPLAIN QUERY PLAN "
	if eng == "postgres" {
		explain = "EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF) "
	}
	for _, c := range cases {
		switch c.name {
		case "tag kind (10%)", "until 0.1% (oldest)", "to=ops+status=failed", "tags kind+campaign (0.1%)", "to=ops, cursor at 50%":
		default:
			continue
		}
		probes, lists, err := s.LogQueries(ctx, acct.ID, c.f, mailroom.Page{Cursor: c.cursor})
		if err != nil {
			t.Fatal(err)
		}
		for _, q := range append(probes, lists...) {
			t.Logf("%s, %s, by %s:\n%s\n%s", eng, c.name, q.Index, q.SQL, plan(t, db, explain+q.SQL, q.Args...))
		}
	}
}
