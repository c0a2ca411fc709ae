package storetest

import (
	"context"
	"testing"

	"github.com/mailroom/mailroom"
)

func init() {
	extraSuites = append(extraSuites, suite{"AccountLimits", testAccountLimits})
}

// testAccountLimits: an account nobody configured follows the defaults
// (NULL in storage, not a copy of today's default), an update is read back
// by every way of reading accounts (the rate limiter reloads through
// ListAccounts), fractional rates survive both engines, and an unknown
// account is not_found.
func testAccountLimits(t *testing.T, s mailroom.Store) {
	ctx := context.Background()
	a := NewAccount(t, s, "acme")
	other := NewAccount(t, s, "globex")

	fresh := Try(s.AccountByName(ctx, "acme")).Must(t)
	if fresh.RateLimit != (mailroom.RateLimit{}) {
		t.Fatalf("a new account has limits %+v, want none set", fresh.RateLimit)
	}
	if got := fresh.Limits(); got != (mailroom.RateLimit{Rate: mailroom.DefaultRate, Burst: mailroom.DefaultBurst}) {
		t.Fatalf("limits in force %+v, want the defaults", got)
	}

	want := mailroom.RateLimit{Rate: 2.5, Burst: 5}
	updated := Try(s.UpdateAccountLimits(ctx, "acme", 2.5, 5)).Must(t)
	if updated.ID != a.ID || updated.Name != "acme" || !updated.CreatedAt.Equal(t0) || updated.RateLimit != want {
		t.Fatalf("update returned %+v", updated)
	}
	if got := Try(s.AccountByID(ctx, a.ID)).Must(t).RateLimit; got != want {
		t.Fatalf("by id: %+v, want %+v", got, want)
	}
	if got := Try(s.AccountByName(ctx, "acme")).Must(t).RateLimit; got != want {
		t.Fatalf("by name: %+v, want %+v", got, want)
	}
	for _, acct := range Try(s.ListAccounts(ctx)).Must(t) {
		switch acct.ID {
		case a.ID:
			if acct.RateLimit != want {
				t.Fatalf("list: acme has %+v, want %+v", acct.RateLimit, want)
			}
		case other.ID:
			if acct.RateLimit != (mailroom.RateLimit{}) {
				t.Fatalf("list: updating acme changed globex to %+v", acct.RateLimit)
			}
		}
	}

	// A second update replaces the first.
	Try(s.UpdateAccountLimits(ctx, "acme", 1000, 2000)).Must(t)
	if got := Try(s.AccountByName(ctx, "acme")).Must(t).RateLimit; got != (mailroom.RateLimit{Rate: 1000, Burst: 2000}) {
		t.Fatalf("after a second update: %+v", got)
	}

	_, err := s.UpdateAccountLimits(ctx, "nobody", 1, 1)
	wantCode(t, err, mailroom.ECodeNotFound)
}
