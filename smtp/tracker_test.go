package smtp

import (
	"io"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/mailroom/mailroom"
	"github.com/mailroom/mailroom/sites"
)

// recorder is package sites' real Tracker, recording what the transport
// tells it and the places it reserves, so that tests can check both.
type recorder struct {
	*sites.Tracker

	mu     sync.Mutex
	events []keyedEvent
	places []time.Time
}

type keyedEvent struct {
	Key connKey
	mailroom.SiteEvent
}

var _ mailroom.Sites = (*recorder)(nil)

// newTracker is a Tracker with profiles before the default, on clock (nil:
// time.Now).
func newTracker(clock func() time.Time, profiles ...mailroom.SiteProfile) *recorder {
	policy := mailroom.DeliveryPolicy{Default: mailroom.DefaultSiteProfile, Sites: profiles}
	return &recorder{Tracker: sites.New(policy, sites.Options{
		Now: clock, Log: slog.New(slog.NewTextHandler(io.Discard, nil))})}
}

func (r *recorder) Observe(key connKey, e mailroom.SiteEvent) {
	r.mu.Lock()
	r.events = append(r.events, keyedEvent{key, e})
	r.mu.Unlock()
	r.Tracker.Observe(key, e)
}

func (r *recorder) Reserve(key connKey, now time.Time) mailroom.SiteReservation {
	res := r.Tracker.Reserve(key, now)
	r.mu.Lock()
	r.places = append(r.places, res.At)
	r.mu.Unlock()
	return res
}

// eventsOf are the events of a kind so far.
func (r *recorder) eventsOf(kind mailroom.SiteEventKind) []keyedEvent {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []keyedEvent
	for _, e := range r.events {
		if e.Kind == kind {
			out = append(out, e)
		}
	}
	return out
}

// openNow is how many connections of key the site was told are open.
func (r *recorder) openNow(key connKey) int {
	return len(r.eventsOf(mailroom.SiteConnected)) - len(r.eventsOf(mailroom.SiteDisconnected))
}

// reserved are the places reserved so far.
func (r *recorder) reserved() []time.Time {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]time.Time(nil), r.places...)
}

// suspend suspends key as repeated throttling does: episodes a few
// seconds apart, on the tracker's clock moved on by step.
func (r *recorder) suspend(t *testing.T, key connKey, clock *testClock) time.Time {
	t.Helper()
	for range sites.SuspendAfter {
		r.Tracker.Observe(key, mailroom.SiteEvent{Kind: mailroom.SiteThrottled, At: clock.Now(),
			Code: 421, Enhanced: "4.7.0", Text: "Try again later, closing connection", MX: "mx1.bigmail.test"})
		clock.Add(2 * sites.EpisodeWindow)
	}
	res := r.Tracker.Reserve(key, clock.Now())
	if res.SuspendedUntil.IsZero() {
		t.Fatalf("%v not suspended after %d episodes", key, sites.SuspendAfter)
	}
	return res.SuspendedUntil
}

// testClock is a clock that moves when the test says.
type testClock struct {
	mu  sync.Mutex
	now time.Time
}

func newTestClock() *testClock {
	return &testClock{now: time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)}
}

func (c *testClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *testClock) Add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}
