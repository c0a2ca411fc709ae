package sites

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/mailroom/mailroom"
	"github.com/mailroom/mailroom/poll"
)

// suspend gives key three episodes within a minute on tr.
func suspend(tr *Tracker, c *clock, key mailroom.SiteKey) {
	for range SuspendAfter {
		throttle(tr, c, key, false)
		c.Advance(2 * time.Second)
	}
}

func TestSuspensionIsSharedThroughTheStore(t *testing.T) {
	c := newClock()
	store := newMemStore()
	a := newTracker(t, c, Options{Store: store})
	b := newTracker(t, c, Options{Store: store})

	suspend(a, c, limited)
	until := suspendedUntil(a, c, limited)
	if until.IsZero() {
		t.Fatal("a did not suspend")
	}
	// b has never sent to the site: after a's sync and its own, it
	// honours the suspension, and knows the site is not ready.
	a.sync(t.Context())
	c.Advance(SyncInterval)
	b.sync(t.Context())
	if got := b.ReadyAt("limited", c.Now()); !got.Equal(until) {
		t.Fatalf("b's ReadyAt = %v, want a's suspension's end %v", got, until)
	}
	if got := suspendedUntil(b, c, limited); !got.Equal(until) {
		t.Fatalf("b's reservation: suspended until %v, want %v", got, until)
	}
	if s := state(t, b, limited); s.SuspendedUntil == nil || !s.SuspendedUntil.Equal(until) {
		t.Fatalf("b's snapshot: suspendedUntil %v", s.SuspendedUntil)
	}

	// The suspension ends; b is throttled into one of its own within the
	// hour: it knows a's level, and doubles it.
	c.Advance(until.Sub(c.Now()) + 10*time.Minute)
	b.sync(t.Context())
	if !signalled(b) {
		t.Fatal("the end of a suspension did not signal Changed")
	}
	suspend(b, c, limited)
	if got := suspendedUntil(b, c, limited).Sub(c.Now()); got != 10*time.Minute-2*time.Second {
		t.Fatalf("b's suspension after a's lasts %v, want 10m", got+2*time.Second)
	}
	b.sync(t.Context())
	a.sync(t.Context())
	if got := suspendedUntil(a, c, limited); got.IsZero() {
		t.Fatal("a does not honour b's suspension")
	}

	// An operator lifts it in the store: both nodes send again.
	signalled(a)
	lift := store.byKey[limited]
	lift.Until = c.Now()
	if err := store.SuspendSite(t.Context(), lift); err != nil {
		t.Fatal(err)
	}
	a.sync(t.Context())
	b.sync(t.Context())
	for name, tr := range map[string]*Tracker{"a": a, "b": b} {
		if got := suspendedUntil(tr, c, limited); !got.IsZero() {
			t.Fatalf("%s still suspended until %v after the lift", name, got)
		}
	}
	if !signalled(a) {
		t.Fatal("a lifted suspension did not signal Changed")
	}
}

func TestSuspensionWaitsForTheStore(t *testing.T) {
	c := newClock()
	store := newMemStore()
	store.fail = errors.New("storage unavailable")
	a := newTracker(t, c, Options{Store: store})
	suspend(a, c, limited)
	until := suspendedUntil(a, c, limited)
	a.sync(t.Context())
	if got := suspendedUntil(a, c, limited); !got.Equal(until) {
		t.Fatalf("a failed sync changed the suspension to %v", got)
	}
	store.fail = nil
	c.Advance(SyncInterval)
	a.sync(t.Context())
	if got := store.byKey[limited].Until; !got.Equal(until) {
		t.Fatalf("after storage came back the store has %v, want %v", got, until)
	}
	if got := suspendedUntil(a, c, limited); !got.Equal(until) {
		t.Fatalf("suspension after the write = %v, want %v", got, until)
	}
}

func TestRunWritesASuspensionAtOnce(t *testing.T) {
	c := newClock()
	store := newMemStore()
	a := newTracker(t, c, Options{Store: store})
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan struct{})
	go func() { a.Run(ctx); close(done) }()
	defer func() { cancel(); <-done }()
	suspend(a, c, limited)
	poll.Until(t, 5*time.Second, "the suspension in the store", func() bool {
		store.mu.Lock()
		defer store.mu.Unlock()
		return !store.byKey[limited].Until.IsZero()
	})
}

func TestIdleKeysAreForgotten(t *testing.T) {
	c := newClock()
	tr := newTracker(t, c, Options{})
	throttle(tr, c, limited, false)
	event(tr, c, unlimited, mailroom.SiteConnected)
	c.Advance(IdleForget)
	tr.sync(t.Context())
	var sites []string
	for _, s := range tr.Snapshot() {
		sites = append(sites, s.Site)
	}
	if len(sites) != 1 || sites[0] != unlimited.Site {
		t.Fatalf("after an idle hour the snapshot has %v, want only the site with a connection open", sites)
	}
	if _, ok := tr.SiteOf("limited.test"); ok {
		t.Fatal("an idle domain is still remembered")
	}
	// What it learned is gone: a new key has the profile's rate.
	tr.Reserve(limited, c.Now())
	if got := state(t, tr, limited).Rate; got != 600 {
		t.Fatalf("a forgotten key's rate = %v, want the profile's 600", got)
	}
}
