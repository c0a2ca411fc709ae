package ratelimit_test

import (
	"context"
	"fmt"
	"log/slog"
	"testing"
	"time"

	"github.com/mailroom/mailroom"
	"github.com/mailroom/mailroom/poll"
	"github.com/mailroom/mailroom/ratelimit"
	"github.com/mailroom/mailroom/storetest"
)

var t0 = time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)

var quiet = slog.New(slog.DiscardHandler)

// newLimiter returns a limiter over a real SQLite store holding the
// accounts "acme", limited to rate and burst, and "globex" on defaults.
func newLimiter(t *testing.T, rate float64, burst int) (*ratelimit.Limiter, mailroom.Store, *mailroom.Account, *mailroom.Account) {
	t.Helper()
	s := storetest.SQLite.Open(t)
	acme := storetest.NewAccount(t, s, "acme")
	globex := storetest.NewAccount(t, s, "globex")
	if _, err := s.UpdateAccountLimits(context.Background(), "acme", rate, burst); err != nil {
		t.Fatal(err)
	}
	l := ratelimit.New(s, quiet)
	if err := l.Reload(context.Background()); err != nil {
		t.Fatal(err)
	}
	return l, s, acme, globex
}

// A burst passes at once, the next request waits for a token, and the
// headers' numbers say so; other accounts keep their own buckets.
func TestBurstThenRate(t *testing.T) {
	l, _, acme, globex := newLimiter(t, 2, 5)
	for i := range 5 {
		d := l.Allow(acme.ID, t0)
		if !d.Allowed || d.Limit != 5 || d.Remaining != 4-i || d.RetryAfter != 0 {
			t.Fatalf("request %d: %+v", i+1, d)
		}
	}
	d := l.Allow(acme.ID, t0)
	if d.Allowed || d.Remaining != 0 || d.RetryAfter != 500*time.Millisecond || d.Reset != 2500*time.Millisecond {
		t.Fatalf("sixth request: %+v, want refused, retry after 0.5 s, full after 2.5 s", d)
	}
	if d := l.Allow(globex.ID, t0); !d.Allowed || d.Limit != mailroom.DefaultBurst || d.Remaining != mailroom.DefaultBurst-1 {
		t.Fatalf("another account: %+v", d)
	}
	if d := l.Allow(acme.ID, t0.Add(499*time.Millisecond)); d.Allowed {
		t.Fatalf("a token before its time: %+v", d)
	}
	if d := l.Allow(acme.ID, t0.Add(500*time.Millisecond)); !d.Allowed {
		t.Fatalf("the token due at 0.5 s: %+v", d)
	}
}

// n nodes, each told there are n, let through about the account's limit
// in total, not n times it, whatever n is; and the burst of a node never
// falls below one request.
func TestSharesAcrossNodes(t *testing.T) {
	for _, c := range []struct {
		rate  float64
		burst int
	}{{2, 5}, {10, 20}, {100, 200}, {0.5, 1}} {
		for n := 1; n <= 5; n++ {
			t.Run(fmt.Sprintf("%g/s burst %d on %d nodes", c.rate, c.burst, n), func(t *testing.T) {
				s := storetest.SQLite.Open(t)
				acct := storetest.NewAccount(t, s, "acme")
				if _, err := s.UpdateAccountLimits(context.Background(), "acme", c.rate, c.burst); err != nil {
					t.Fatal(err)
				}
				nodes := make([]*ratelimit.Limiter, n)
				for i := range nodes {
					nodes[i] = ratelimit.New(s, quiet)
					nodes[i].SetNodes(n)
					if err := nodes[i].Reload(context.Background()); err != nil {
						t.Fatal(err)
					}
				}
				// Each node alone: at least one request at once, never more
				// than its share (rounded) of the burst.
				first := nodes[0].Allow(acct.ID, t0)
				if !first.Allowed || first.Limit != c.burst {
					t.Fatalf("first request on a node: %+v", first)
				}
				// A client far over its limit, its requests spread evenly
				// over the nodes by a load balancer, for 60 s.
				const window = 60 * time.Second
				step := time.Duration(float64(time.Second) / (c.rate * 20))
				allowed := 1
				i := 1
				for at := t0; at.Before(t0.Add(window)); at = at.Add(step) {
					if nodes[i%n].Allow(acct.ID, at).Allowed {
						allowed++
					}
					i++
				}
				want := float64(c.burst) + c.rate*window.Seconds()
				if got := float64(allowed); got < want*0.8 || got > want*1.2 {
					t.Fatalf("%d requests passed in %v, want %.0f within 20%%", allowed, window, want)
				}
			})
		}
	}
}

// Telling a node how many nodes there are changes the buckets it already
// holds, on their next request.
func TestSetNodesAppliesToLiveBuckets(t *testing.T) {
	l, _, acme, _ := newLimiter(t, 10, 20)
	l.Allow(acme.ID, t0)
	l.SetNodes(4) // share: 2.5/s, burst 5
	passed := 0
	for range 20 {
		if l.Allow(acme.ID, t0).Allowed {
			passed++
		}
	}
	if passed != 5 {
		t.Fatalf("after SetNodes(4) %d requests passed at once, want a burst of 5", passed)
	}
	d := l.Allow(acme.ID, t0)
	if d.Limit != 20 || d.RetryAfter != 400*time.Millisecond {
		t.Fatalf("refused on a quarter share: %+v, want limit 20 and a retry after 0.4 s", d)
	}
	l.SetNodes(0) // this node at least is alive
	if d := l.Allow(acme.ID, t0.Add(time.Second)); !d.Allowed {
		t.Fatalf("SetNodes(0): %+v", d)
	}
}

// Remaining counts whole requests of this node's share, scaled to the
// account: it is 0 exactly when this node would refuse the next request.
func TestRemainingScalesWithNodes(t *testing.T) {
	l, _, acme, _ := newLimiter(t, 10, 20)
	l.SetNodes(2)
	if d := l.Allow(acme.ID, t0); d.Remaining != 18 || d.Limit != 20 {
		t.Fatalf("first of 10 on a half share: %+v, want 18 of 20 remaining", d)
	}
	for range 9 {
		l.Allow(acme.ID, t0)
	}
	if d := l.Allow(acme.ID, t0); d.Allowed || d.Remaining != 0 {
		t.Fatalf("eleventh on a half share: %+v", d)
	}
}

// An operator's update reaches a running limiter through Reload, and
// lowers the burst of a bucket that was full under the default.
func TestReload(t *testing.T) {
	s := storetest.SQLite.Open(t)
	acme := storetest.NewAccount(t, s, "acme")
	l := ratelimit.New(s, quiet)
	if d := l.Allow(acme.ID, t0); d.Limit != mailroom.DefaultBurst {
		t.Fatalf("before any reload: %+v, want the default burst", d)
	}
	ctx := context.Background()
	if _, err := s.UpdateAccountLimits(ctx, "acme", 2, 5); err != nil {
		t.Fatal(err)
	}
	if d := l.Allow(acme.ID, t0); d.Limit != mailroom.DefaultBurst {
		t.Fatalf("an update applied without a reload: %+v", d)
	}
	if err := l.Reload(ctx); err != nil {
		t.Fatal(err)
	}
	passed := 0
	for range 20 {
		if d := l.Allow(acme.ID, t0); d.Allowed {
			passed++
		} else if d.Limit != 5 {
			t.Fatalf("after reload: %+v", d)
		}
	}
	if passed != 5 {
		t.Fatalf("%d passed after lowering the burst to 5", passed)
	}

	// Storage gone: the limits of the last reload stay.
	s.Close()
	if err := l.Reload(ctx); err == nil {
		t.Fatal("reload from a closed store succeeded")
	}
	if d := l.Allow(acme.ID, t0.Add(10*time.Second)); d.Limit != 5 {
		t.Fatalf("a failed reload dropped the limits: %+v", d)
	}
}

// Run picks up an update by itself, as `mailroom accounts update` on a
// running node relies on.
func TestRunReloads(t *testing.T) {
	s := storetest.SQLite.Open(t)
	acme := storetest.NewAccount(t, s, "acme")
	l := ratelimit.New(s, quiet)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { l.Run(ctx, 20*time.Millisecond); close(done) }()
	defer func() { cancel(); <-done }()

	if _, err := s.UpdateAccountLimits(ctx, "acme", 3, 7); err != nil {
		t.Fatal(err)
	}
	poll.Until(t, 10*time.Second, "Run applies the update", func() bool { return l.Allow(acme.ID, time.Now()).Limit == 7 })
}

// Buckets of idle accounts are dropped once full, so memory follows the
// active accounts, and a dropped bucket comes back full.
func TestForgetIdle(t *testing.T) {
	l, _, acme, _ := newLimiter(t, 2, 5)
	for i := range 1000 {
		l.Allow(fmt.Sprintf("acct_%04d", i), t0)
	}
	for range 5 {
		l.Allow(acme.ID, t0)
	}
	l.Forget(t0)
	if n := l.Buckets(); n != 1001 {
		t.Fatalf("forgot buckets that are not full: %d left", n)
	}
	// Default accounts refill one token in 10 ms; acme needs 2.5 s.
	l.Forget(t0.Add(time.Second))
	if n := l.Buckets(); n != 1 {
		t.Fatalf("%d buckets after the idle ones filled, want acme's alone", n)
	}
	if d := l.Allow(acme.ID, t0.Add(time.Second)); d.Remaining != 1 {
		t.Fatalf("acme's bucket was reset: %+v", d)
	}
	l.Forget(t0.Add(time.Hour))
	if n := l.Buckets(); n != 0 {
		t.Fatalf("%d buckets after an hour idle", n)
	}
}
