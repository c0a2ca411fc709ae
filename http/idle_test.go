package http_test

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mailroom/mailroom"
	"github.com/mailroom/mailroom/delivery"
	mhttp "github.com/mailroom/mailroom/http"
	"github.com/mailroom/mailroom/poll"
	"github.com/mailroom/mailroom/storetest"
)

// countingStore counts delivery claims: an idle worker must not spin.
type countingStore struct {
	mailroom.Store
	claims atomic.Int64
}

func (c *countingStore) ClaimDueRecipients(ctx context.Context, claim mailroom.Claim) ([]*mailroom.QueuedRecipient, error) {
	c.claims.Add(1)
	return c.Store.ClaimDueRecipients(ctx, claim)
}

// pollClock is the Deliverer's idle wait, driven by the test: a poll
// interval passes only when the test fires it.
type pollClock struct {
	mu    sync.Mutex
	waits []chan time.Time
}

func (c *pollClock) After(time.Duration) <-chan time.Time {
	ch := make(chan time.Time, 1)
	c.mu.Lock()
	c.waits = append(c.waits, ch)
	c.mu.Unlock()
	return ch
}

// waited is how many times the claim loop has gone idle.
func (c *pollClock) waited() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.waits)
}

// fire ends the newest idle wait: one poll interval passes.
func (c *pollClock) fire() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.waits[len(c.waits)-1] <- time.Now()
}

// After its work is done, an idle delivery worker looks for more once per
// poll interval, not in a loop: finished messages, wakes and empty claims
// must not keep the loop turning. The poll interval is the test's to fire,
// so this counts claims per poll rather than per unit of time.
func TestIdleWorkersDoNotSpin(t *testing.T) {
	clock := &pollClock{}
	store := &countingStore{Store: storetest.SQLite.Open(t)}
	e := newEnvWithStore(t, store, func(_ *mhttp.Server, d *delivery.Deliverer) { d.After = clock.After })
	e.verifiedDomain(t, "shop.example")
	e.mailDomain("example.net")
	for range 3 {
		e.waitStatus(t, e.sendOne(t, "ann@example.net"), "delivered")
	}

	const polls = 20
	before := store.claims.Load()
	for range polls {
		idle := waitIdle(t, clock, 0)
		clock.fire()
		waitIdle(t, clock, idle+1)
	}
	// Each poll claims once. The last messages' slots coming free may wake
	// the loop once more, and so may the last accept; nothing else may.
	n := store.claims.Load() - before
	if n < polls || n > polls+2 {
		t.Fatalf("%d claims for %d idle polls; want one claim per poll", n, polls)
	}
}

// waitIdle waits until the claim loop has gone idle at least atLeast times
// (and at least once), and returns how many times it has.
func waitIdle(t *testing.T, clock *pollClock, atLeast int) int {
	t.Helper()
	var n int
	if !poll.Within(10*time.Second, func() bool { n = clock.waited(); return n >= max(1, atLeast) }) {
		t.Fatalf("the claim loop did not go idle (it went idle %d times; want %d)", n, max(1, atLeast))
	}
	return n
}
