package storetest_test

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/mailroom/mailroom"
	"github.com/mailroom/mailroom/postgres"
	"github.com/mailroom/mailroom/sqlite"
	"github.com/mailroom/mailroom/sqlstore"
	"github.com/mailroom/mailroom/storetest"
)

// BenchmarkClaimAmongScheduled measures the claim of due mail, and the
// first page (100) of GET /v1/scheduled, beside 100 and beside many
// messages scheduled for later (MAILROOM_BENCH_SCHEDULED, default a
// million), on each engine: the partial indexes recipients_due and
// messages_scheduled must keep both from growing with the backlog. Each op
// accepts 50 messages due now (untimed) and claims them (timed).
func BenchmarkClaimAmongScheduled(b *testing.B) {
	backlog := 1_000_000
	if v, err := strconv.Atoi(os.Getenv("MAILROOM_BENCH_SCHEDULED")); err == nil {
		backlog = v
	}
	ctx := context.Background()
	for _, eng := range []string{"sqlite", "postgres"} {
		for _, n := range []int{100, backlog} {
			b.Run(fmt.Sprintf("%s/scheduled=%d", eng, n), func(b *testing.B) {
				s, db := openWithSQL(b, eng)
				acct := storetest.NewAccount(b, s, "bench")
				fillScheduled(b, db, eng, acct.ID, n)
				b.Run("claim50", func(b *testing.B) {
					for i := 0; b.Loop(); i++ {
						b.StopTimer()
						ms := make([]*mailroom.Message, 50)
						for j := range ms {
							ms[j] = storetest.NewMessage(acct, time.Now(), fmt.Sprintf("r%d-%d@example.net", i, j))
						}
						if _, err := s.AcceptMessages(ctx, ms); err != nil {
							b.Fatal(err)
						}
						b.StartTimer()
						got, err := s.ClaimDueRecipients(ctx, mailroom.Claim{Node: "n", Now: time.Now(), Lease: time.Minute, Limit: 50})
						if err != nil || len(got) != 50 {
							b.Fatalf("claimed %d (%v), want 50", len(got), err)
						}
					}
				})
				b.Run("list", func(b *testing.B) {
					for b.Loop() {
						if _, _, err := s.ListScheduled(ctx, acct.ID, mailroom.Page{Limit: 100}); err != nil {
							b.Fatal(err)
						}
					}
				})
			})
		}
	}
}

// openWithSQL opens a fresh store of engine eng and a plain connection to
// its database, for filling it faster than the API would.
func openWithSQL(b testing.TB, eng string) (*sqlstore.Store, *sql.DB) {
	ctx := context.Background()
	var s *sqlstore.Store
	var db *sql.DB
	var err error
	switch eng {
	case "sqlite":
		dir := b.TempDir()
		if s, err = sqlite.Open(ctx, dir); err == nil {
			db, err = sql.Open("sqlite", "file:"+filepath.Join(dir, sqlite.FileName)+"?_pragma=busy_timeout(10000)")
		}
	default:
		url := storetest.NewPostgresDatabase(b)
		if s, err = postgres.Open(ctx, url); err == nil {
			db, err = sql.Open("pgx", url)
		}
	}
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { db.Close(); s.Close() })
	return s, db
}

// fillScheduled inserts n messages scheduled over the next days, one
// recipient each, in statements of 100,000 rows. Their keys (16 bytes,
// migration 00015) are i's 16 decimal digits; the account is its integer
// key (00016).
func fillScheduled(b *testing.B, db *sql.DB, eng, accountID string, n int) {
	const chunk = 100_000
	key := map[string]string{"sqlite": "CAST(printf('%016d', i) AS BLOB)", "postgres": "decode(lpad(i::text, 16, '0'), 'escape')"}[eng]
	account := storedAccountKey(b, db, accountID)
	start := time.Now().Add(24 * time.Hour).UnixMicro()
	envelope := `{"from":{"address":"orders@shop.example"},"to":[{"address":"later@example.net"}]}`
	for from := 0; from < n; from += chunk {
		to := min(n, from+chunk)
		seq := `WITH RECURSIVE seq(i) AS (SELECT CAST($1 AS BIGINT) UNION ALL SELECT i + 1 FROM seq WHERE i + 1 < $2) `
		if _, err := db.Exec(seq+`INSERT INTO messages (id, account_id, status, from_address, subject, category, domain,
			content, envelope, created_at, scheduled_at)
			SELECT `+key+`, $3, 'scheduled', 'orders@shop.example', 'Later', 'transactional',
			'shop.example', $4, $4, CAST($5 AS BIGINT), CAST($5 AS BIGINT) + i * 1000 FROM seq`,
			from, to, account, envelope, start); err != nil {
			b.Fatal(err)
		}
		if _, err := db.Exec(seq+`INSERT INTO recipients (message_id, address, account_id, kind, position, status,
			queued_at, due_at, next_attempt_at)
			SELECT `+key+`, 'later@example.net', $3, 'to', 0, 'scheduled',
			CAST($4 AS BIGINT) + i * 1000, CAST($4 AS BIGINT) + i * 1000, CAST($4 AS BIGINT) + i * 1000 FROM seq`,
			from, to, account, start); err != nil {
			b.Fatal(err)
		}
	}
	if _, err := db.Exec(`ANALYZE`); err != nil {
		b.Fatal(err)
	}
}
