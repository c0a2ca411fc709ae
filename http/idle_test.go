package http_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mailroom/mailroom"
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

// After its work is done, an idle delivery worker looks for more once per
// poll interval (20 ms in tests), not in a loop: woken workers must not
// keep waking each other.
func TestIdleWorkersDoNotSpin(t *testing.T) {
	store := &countingStore{Store: storetest.SQLite.Open(t)}
	e := newEnvWithStore(t, store)
	e.verifiedDomain(t, "shop.example")
	e.mailDomain("example.net")
	for range 3 {
		e.waitStatus(t, e.sendOne(t, "ann@example.net"), "delivered")
	}
	before := store.claims.Load()
	time.Sleep(500 * time.Millisecond) // a window to count in, not synchronisation
	// 2 workers × 500 ms / 20 ms = 50 polls; a spinning worker makes thousands.
	if n := store.claims.Load() - before; n > 150 {
		t.Fatalf("%d claims in 500 ms while idle", n)
	}
}
