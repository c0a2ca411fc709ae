package retention_test

import (
	"context"
	"log/slog"
	"testing"
	"time"

	"github.com/mailroom/mailroom"
	"github.com/mailroom/mailroom/retention"
	"github.com/mailroom/mailroom/storetest"
)

// The sweeper removes the audit entries older than --audit-retention and
// only those, whatever the message retention is, on both engines.
func TestSweeperRemovesOldAuditEntriesOnly(t *testing.T) {
	storetest.Each(t, func(t *testing.T, e storetest.Engine) {
		s := e.Open(t)
		ctx := context.Background()
		acct := storetest.NewAccount(t, s, "acme")
		for range 3 {
			_, k := mailroom.NewAPIKey(acct.ID, "k", mailroom.Scopes{mailroom.ScopeSend}, time.Now())
			if err := s.CreateAPIKey(ctx, k); err != nil {
				t.Fatal(err)
			}
		}
		count := func() int {
			entries, _, err := s.ListAuditEntries(ctx, acct.ID, mailroom.AuditFilter{}, mailroom.Page{Limit: 100})
			if err != nil {
				t.Fatal(err)
			}
			return len(entries)
		}
		year := 365 * 24 * time.Hour
		sweep := func(now time.Time) {
			t.Helper()
			r := &retention.Sweeper{Store: s, Webhooks: s, Period: 30 * 24 * time.Hour, Audit: s, AuditPeriod: year,
				Now: func() time.Time { return now }, Log: slog.New(slog.DiscardHandler)}
			if _, err := r.RunOnce(ctx); err != nil {
				t.Fatal(err)
			}
		}
		// Two months on, past the messages' retention: every entry stays.
		sweep(time.Now().Add(60 * 24 * time.Hour))
		if n := count(); n != 4 {
			t.Fatalf("%d entries after two months, want all 4", n)
		}
		// A year and a day on, they are gone.
		sweep(time.Now().Add(year + 24*time.Hour))
		if n := count(); n != 0 {
			t.Fatalf("%d entries after a year, want none", n)
		}
	})
}
