package storetest

import (
	"cmp"
	"context"
	"slices"
	"testing"
	"time"

	"github.com/mailroom/mailroom"
)

func init() {
	extraSuites = append(extraSuites,
		suite{"AttemptSiteAndDeferralReason", testAttemptSiteAndReason},
		suite{"SiteSuspensions", testSiteSuspensions},
	)
}

// A deferred attempt keeps its site, MX host and reason: the log shows
// them with the next attempt, and the retry's claim hands them back, since
// a greylisted recipient is retried once after --greylist-retry on the same
// host (mailroom.NewAttempt reads the last reason). A later delivery keeps
// the last deferral's reason, as history.
func testAttemptSiteAndReason(t *testing.T, s mailroom.Store) {
	ctx := context.Background()
	acct := NewAccount(t, s, "acme")
	m := NewMessage(acct, t0, "a@x.example", "b@x.example")
	Try(s.AcceptMessage(ctx, m)).Must(t)
	policy := mailroom.RetryPolicy{MinDelay: time.Minute, MaxDelay: time.Hour, Window: 24 * time.Hour, GreylistRetry: 5 * time.Minute}

	first := Try(claim(s, "node_a", t0, 10)).Must(t)
	if len(first) != 2 {
		t.Fatalf("claimed %d, want 2", len(first))
	}
	for _, q := range first {
		if q.Site != "" || q.LastDeferralReason != "" || q.MX != "" {
			t.Fatalf("a recipient never attempted was claimed with site %q, reason %q, MX %q", q.Site, q.LastDeferralReason, q.MX)
		}
	}
	now := t0.Add(time.Minute)
	results := map[string]mailroom.RecipientResult{
		"a@x.example": {Outcome: mailroom.Deferred, Code: 451, Enhanced: "4.7.1", Response: "451 4.7.1 Greylisted, try again in 5 minutes",
			MX: "mx2.x.example", Site: "x-provider"},
		"b@x.example": {Outcome: mailroom.Deferred, Code: 421, Enhanced: "4.7.0", Response: "421 4.7.0 Try again later, closing connection.",
			MX: "mx1.x.example", Site: "x-provider", RetryAt: now.Add(30 * time.Second)},
	}
	var attempts []*mailroom.Attempt
	for _, q := range first {
		attempts = append(attempts, mailroom.NewAttempt(q, results[q.Address], now, policy, 1))
	}
	if err := s.RecordAttempts(ctx, attempts); err != nil {
		t.Fatal(err)
	}
	type state struct {
		site, mx string
		reason   mailroom.DeferralReason
		next     time.Time
	}
	want := map[string]state{
		"a@x.example": {"x-provider", "mx2.x.example", mailroom.DeferGreylisted, now.Add(5 * time.Minute)},
		"b@x.example": {"x-provider", "mx1.x.example", mailroom.DeferThrottled, now.Add(30 * time.Second)},
	}
	check := func(how string, rs []*mailroom.Recipient) {
		t.Helper()
		if len(rs) != 2 {
			t.Fatalf("%s: %d recipients, want 2", how, len(rs))
		}
		for _, r := range rs {
			w := want[r.Address]
			if r.Site != w.site || r.MX != w.mx || r.LastDeferralReason != w.reason || r.NextAttemptAt == nil || !r.NextAttemptAt.Equal(w.next) {
				t.Errorf("%s: %s has site %q, MX %q, reason %q, next attempt %v; want %+v", how, r.Address, r.Site, r.MX,
					r.LastDeferralReason, r.NextAttemptAt, w)
			}
		}
	}
	message := func() *mailroom.Message {
		t.Helper()
		got, _, err := s.Message(ctx, acct.ID, m.ID)
		if err != nil {
			t.Fatal(err)
		}
		return got
	}
	check("the message", message().Recipients)
	listed, _ := Try2(s.ListMessages(ctx, acct.ID, mailroom.MessageFilter{}, mailroom.Page{})).Must(t)
	if len(listed) != 1 {
		t.Fatalf("the log lists %d messages, want 1", len(listed))
	}
	check("the log", listed[0].Recipients)

	// Not due before their times; then each comes back with what its
	// last attempt left.
	if early := Try(claim(s, "node_a", now.Add(29*time.Second), 10)).Must(t); len(early) != 0 {
		t.Fatalf("claimed %s before it was due", addresses(early))
	}
	retry := Try(claim(s, "node_a", now.Add(5*time.Minute), 10)).Must(t)
	if len(retry) != 2 {
		t.Fatalf("the retry claimed %d, want 2", len(retry))
	}
	for _, q := range retry {
		w := want[q.Address]
		if q.Site != w.site || q.MX != w.mx || q.LastDeferralReason != w.reason || q.Attempts != 1 {
			t.Errorf("the retry's claim of %s has site %q, MX %q, reason %q, %d attempts; want %+v and 1", q.Address, q.Site, q.MX,
				q.LastDeferralReason, q.Attempts, w)
		}
	}
	// Greylisted again, a follows the schedule: NewAttempt read the last
	// reason the claim carried. b is delivered and keeps its reason.
	later := now.Add(5 * time.Minute)
	attempts = attempts[:0]
	for _, q := range retry {
		res := mailroom.RecipientResult{Outcome: mailroom.Delivered, Code: 250, Response: "250 ok", MX: "mx1.x.example", Site: "x-provider"}
		if q.Address == "a@x.example" {
			res = results["a@x.example"]
		}
		attempts = append(attempts, mailroom.NewAttempt(q, res, later, policy, 1))
	}
	if err := s.RecordAttempts(ctx, attempts); err != nil {
		t.Fatal(err)
	}
	for _, r := range message().Recipients {
		switch r.Address {
		case "a@x.example":
			// The schedule's second delay: MinDelay doubled.
			if r.LastDeferralReason != mailroom.DeferGreylisted || r.NextAttemptAt == nil || !r.NextAttemptAt.Equal(later.Add(2*time.Minute)) {
				t.Errorf("greylisted twice, a has reason %q and next attempt %v, want greylisted at %v", r.LastDeferralReason,
					r.NextAttemptAt, later.Add(2*time.Minute))
			}
		case "b@x.example":
			if r.Status != mailroom.RecipientDelivered || r.LastDeferralReason != mailroom.DeferThrottled || r.Site != "x-provider" || r.NextAttemptAt != nil {
				t.Errorf("delivered, b has status %s, reason %q, site %q, next attempt %v", r.Status, r.LastDeferralReason, r.Site, r.NextAttemptAt)
			}
		}
	}
}

// Suspensions are kept per site and source address, replaced by the next
// one of their key unless it ends sooner, and listed by when they end.
func testSiteSuspensions(t *testing.T, s mailroom.Store) {
	ctx := context.Background()
	if got := Try(s.SiteSuspensions(ctx, t0)).Must(t); len(got) != 0 {
		t.Fatalf("a new store has suspensions: %+v", got)
	}
	google := mailroom.SiteKey{Site: "google"}
	googleFrom := mailroom.SiteKey{Site: "google", Source: "192.0.2.10"}
	yahoo := mailroom.SiteKey{Site: "yahoo", Source: "192.0.2.10"}
	suspend := func(key mailroom.SiteKey, until time.Time, level int) {
		t.Helper()
		if err := s.SuspendSite(ctx, mailroom.SiteSuspension{Key: key, Until: until, Level: level}); err != nil {
			t.Fatal(err)
		}
	}
	suspend(google, t0.Add(5*time.Minute), 1)
	suspend(googleFrom, t0.Add(10*time.Minute), 2)
	suspend(yahoo, t0.Add(time.Minute), 1)
	list := func(since time.Time) []mailroom.SiteSuspension {
		t.Helper()
		got := Try(s.SiteSuspensions(ctx, since)).Must(t)
		slices.SortFunc(got, func(a, b mailroom.SiteSuspension) int {
			return cmp.Or(cmp.Compare(a.Key.Site, b.Key.Site), cmp.Compare(a.Key.Source, b.Key.Source))
		})
		return got
	}
	same := func(how string, got []mailroom.SiteSuspension, want ...mailroom.SiteSuspension) {
		t.Helper()
		if len(got) != len(want) {
			t.Fatalf("%s: %+v, want %+v", how, got, want)
		}
		for i := range got {
			if got[i].Key != want[i].Key || !got[i].Until.Equal(want[i].Until) || got[i].Level != want[i].Level {
				t.Fatalf("%s: %+v, want %+v", how, got, want)
			}
		}
	}
	same("all three", list(t0),
		mailroom.SiteSuspension{Key: google, Until: t0.Add(5 * time.Minute), Level: 1},
		mailroom.SiteSuspension{Key: googleFrom, Until: t0.Add(10 * time.Minute), Level: 2},
		mailroom.SiteSuspension{Key: yahoo, Until: t0.Add(time.Minute), Level: 1})
	// Ended ones are not listed; one that ends at since has ended.
	same("after yahoo's", list(t0.Add(time.Minute)),
		mailroom.SiteSuspension{Key: google, Until: t0.Add(5 * time.Minute), Level: 1},
		mailroom.SiteSuspension{Key: googleFrom, Until: t0.Add(10 * time.Minute), Level: 2})

	// The next suspension of a key replaces it, level and all: a lower
	// level too, after a quiet spell.
	suspend(google, t0.Add(20*time.Minute), 2)
	suspend(yahoo, t0.Add(2*time.Hour), 1)
	// A node that had not read googleFrom's suspension suspends it for
	// less: the longer one stands.
	suspend(googleFrom, t0.Add(6*time.Minute), 1)
	same("replaced", list(t0.Add(time.Minute)),
		mailroom.SiteSuspension{Key: google, Until: t0.Add(20 * time.Minute), Level: 2},
		mailroom.SiteSuspension{Key: googleFrom, Until: t0.Add(10 * time.Minute), Level: 2},
		mailroom.SiteSuspension{Key: yahoo, Until: t0.Add(2 * time.Hour), Level: 1})
	same("an hour on", list(t0.Add(time.Hour)),
		mailroom.SiteSuspension{Key: yahoo, Until: t0.Add(2 * time.Hour), Level: 1})
}
