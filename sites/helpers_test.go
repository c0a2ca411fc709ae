package sites

import (
	"context"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/mailroom/mailroom"
)

// clock is the tests' clock: it moves only when told.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func newClock() *clock { return &clock{t: time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)} }

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *clock) Advance(d time.Duration) time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
	return c.t
}

// testPolicy has a site with a rate ("limited": 5 connections, 600 a
// minute) beside the built-in ones and the default (10 connections, no
// rate).
func testPolicy() mailroom.DeliveryPolicy {
	p := mailroom.NewDeliveryPolicy()
	p.Sites = append([]mailroom.SiteProfile{{Name: "limited", MX: []string{"*.limited.test"},
		MaxConnections: 5, MaxMessagesPerConnection: 100, MaxRate: 600, ConnectTimeout: 30 * time.Second}}, p.Sites...)
	return p
}

var (
	limited   = mailroom.SiteKey{Site: "limited"}
	unlimited = mailroom.SiteKey{Site: "mx.open.test"}
)

func newTracker(t testing.TB, c *clock, opts Options) *Tracker {
	t.Helper()
	opts.Now = c.Now
	if opts.Log == nil {
		opts.Log = slog.New(slog.DiscardHandler)
	}
	tr := New(testPolicy(), opts)
	tr.Site("limited.test", []string{"mx1.limited.test"})
	tr.Site("open.test", []string{"mx.open.test"})
	return tr
}

// throttle tells tr of a throttling reply to key at the clock's time.
func throttle(tr *Tracker, c *clock, key mailroom.SiteKey, onConnect bool) {
	kind := mailroom.SiteThrottled
	if onConnect {
		kind = mailroom.SiteThrottledOnConnect
	}
	tr.Observe(key, mailroom.SiteEvent{Kind: kind, At: c.Now(), Code: 421, Enhanced: "4.7.0", Text: "Try again later", MX: "mx1." + key.Site})
}

func event(tr *Tracker, c *clock, key mailroom.SiteKey, kind mailroom.SiteEventKind) {
	tr.Observe(key, mailroom.SiteEvent{Kind: kind, At: c.Now()})
}

// state is key's row of the snapshot.
func state(t testing.TB, tr *Tracker, key mailroom.SiteKey) State {
	t.Helper()
	for _, s := range tr.Snapshot() {
		if s.Site == key.Site && s.Source == key.Source {
			return s
		}
	}
	t.Fatalf("no state for %+v in the snapshot", key)
	return State{}
}

func suspendedUntil(tr *Tracker, c *clock, key mailroom.SiteKey) time.Time {
	return tr.Reserve(key, c.Now()).SuspendedUntil
}

// memStore is a SiteSuspensionStore in memory, holding each key's latest
// suspension as the real stores do, for trackers standing for two nodes.
// (The lead adds the same test over sqlstore once it is on main.)
type memStore struct {
	mu    sync.Mutex
	byKey map[mailroom.SiteKey]mailroom.SiteSuspension
	fail  error
}

func newMemStore() *memStore { return &memStore{byKey: map[mailroom.SiteKey]mailroom.SiteSuspension{}} }

func (s *memStore) SuspendSite(_ context.Context, x mailroom.SiteSuspension) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.fail != nil {
		return s.fail
	}
	s.byKey[x.Key] = x
	return nil
}

func (s *memStore) SiteSuspensions(_ context.Context, since time.Time) ([]mailroom.SiteSuspension, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.fail != nil {
		return nil, s.fail
	}
	var out []mailroom.SiteSuspension
	for _, x := range s.byKey {
		if x.Until.After(since) {
			out = append(out, x)
		}
	}
	return out, nil
}

func signalled(tr *Tracker) bool {
	select {
	case <-tr.Changed():
		return true
	default:
		return false
	}
}

// limitOf is key's connection limit as adapted, what the snapshot shows
// (MaxConnections gives no more than are open while a key waits after
// refusals on connecting).
func limitOf(t *testing.T, tr *Tracker, key mailroom.SiteKey) int {
	t.Helper()
	return state(t, tr, key).MaxConnections
}
