package sites

import (
	"testing"
	"time"

	"github.com/mailroom/mailroom"
)

func TestQuietWindowsWithDeliveriesRaiseTheRate(t *testing.T) {
	c := newClock()
	tr := newTracker(t, c, Options{})
	throttle(tr, c, limited, false) // 600 → 300, step 30
	rate := func() float64 { return state(t, tr, limited).Rate }
	if rate() != 300 {
		t.Fatalf("rate after an episode = %v, want 300", rate())
	}
	// The window of the episode raises nothing.
	event(tr, c, limited, mailroom.SiteDelivered)
	c.Advance(IncreaseWindow)
	if rate() != 300 {
		t.Fatalf("the episode's window raised the rate to %v", rate())
	}
	// A quiet window with deliveries: one step.
	event(tr, c, limited, mailroom.SiteDelivered)
	c.Advance(IncreaseWindow)
	if rate() != 330 {
		t.Fatalf("rate after a quiet window with deliveries = %v, want 330", rate())
	}
	if !signalled(tr) {
		t.Fatal("a raised rate did not signal Changed")
	}
	// Windows without deliveries raise nothing.
	c.Advance(5 * IncreaseWindow)
	if rate() != 330 {
		t.Fatalf("windows without deliveries raised the rate to %v", rate())
	}
	// Back to the profile's and no further.
	for range 20 {
		event(tr, c, limited, mailroom.SiteDelivered)
		c.Advance(IncreaseWindow)
	}
	if rate() != 600 {
		t.Fatalf("rate after many quiet windows = %v, want the profile's 600", rate())
	}
	// Episodes at other rates: the steps do not land on the profile's
	// rate, which still caps it.
	throttle(tr, c, limited, false) // 300, step 30
	c.Advance(IncreaseWindow)
	for range 3 {
		event(tr, c, limited, mailroom.SiteDelivered)
		c.Advance(IncreaseWindow)
	}
	throttle(tr, c, limited, false) // 390 → 195, step 19.5
	if rate() != 195 {
		t.Fatalf("rate = %v, want 195", rate())
	}
	c.Advance(IncreaseWindow)
	for range 30 {
		event(tr, c, limited, mailroom.SiteDelivered)
		c.Advance(IncreaseWindow)
	}
	if rate() != 600 {
		t.Fatalf("rate after many quiet windows = %v, want the profile's 600", rate())
	}
}

func TestConnectionLimitRisesAfterALongQuiet(t *testing.T) {
	c := newClock()
	tr := newTracker(t, c, Options{})
	event(tr, c, limited, mailroom.SiteConnected)
	event(tr, c, limited, mailroom.SiteConnected)
	throttle(tr, c, limited, true)
	if got := limitOf(t, tr, limited); got != 2 {
		t.Fatalf("limit = %d, want 2", got)
	}
	deliverFor := func(d time.Duration) {
		for end := c.Now().Add(d); c.Now().Before(end); c.Advance(time.Second) {
			event(tr, c, limited, mailroom.SiteDelivered)
		}
	}
	deliverFor(ConnectionQuiet - time.Minute)
	if got := limitOf(t, tr, limited); got != 2 {
		t.Fatalf("limit raised to %d before %v without a 421 on connect", got, ConnectionQuiet)
	}
	deliverFor(time.Minute + time.Second)
	if got := limitOf(t, tr, limited); got != 3 {
		t.Fatalf("limit after %v of deliveries = %d, want 3", ConnectionQuiet, got)
	}
	// The receiver says its cap again: the limit goes back to it and the
	// quiet starts over.
	throttle(tr, c, limited, true)
	deliverFor(ConnectionQuiet - time.Minute)
	if got := limitOf(t, tr, limited); got != 2 {
		t.Fatalf("limit %d after a new 421 on connect, want 2 until another quiet %v", got, ConnectionQuiet)
	}
	// Never above the profile's share.
	deliverFor(10 * ConnectionQuiet)
	if got := limitOf(t, tr, limited); got != 5 {
		t.Fatalf("limit after a long quiet = %d, want the profile's 5", got)
	}
}

func TestUnlimitedSiteLearnsARateAndLiftsIt(t *testing.T) {
	c := newClock()
	tr := newTracker(t, c, Options{})
	// 20 s of 10 transactions a second, then a throttle.
	for range 200 {
		tr.Reserve(unlimited, c.Now())
		c.Advance(100 * time.Millisecond)
	}
	throttle(tr, c, unlimited, false)
	// Starts are counted per second: half of 570 to 600.
	if got := state(t, tr, unlimited).Rate; got < 285 || got > 300 {
		t.Fatalf("rate after throttling 600 a minute = %v, want about half, 300", got)
	}
	// It rises past the observed rate: there is no profile rate to stop
	// at.
	for range 20 {
		event(tr, c, unlimited, mailroom.SiteDelivered)
		c.Advance(IncreaseWindow)
	}
	if got := state(t, tr, unlimited).Rate; got <= 600 {
		t.Fatalf("rate after 20 quiet windows = %v, want above 600", got)
	}
	// QuietLift without an episode: no limit again.
	c.Advance(QuietLift)
	if got := state(t, tr, unlimited).Rate; got != 0 {
		t.Fatalf("rate after %v without an episode = %v, want 0 (no limit)", QuietLift, got)
	}
	if r := tr.Reserve(unlimited, c.Now()); !r.At.Equal(c.Now()) {
		t.Fatalf("an unlimited key's reservation waits until %v", r.At)
	}
}

func TestTimeSuspendedIsNotQuiet(t *testing.T) {
	c := newClock()
	store := newMemStore()
	tr := newTracker(t, c, Options{Store: store})
	event(tr, c, unlimited, mailroom.SiteConnected)
	event(tr, c, unlimited, mailroom.SiteConnected)
	throttle(tr, c, unlimited, true)  // 2 connections
	throttle(tr, c, unlimited, false) // and a learned rate
	event(tr, c, unlimited, mailroom.SiteDisconnected)
	event(tr, c, unlimited, mailroom.SiteDisconnected)
	// Another node suspended the key for an hour.
	until := c.Now().Add(time.Hour)
	if err := store.SuspendSite(t.Context(), mailroom.SiteSuspension{Key: unlimited, Until: until, Level: 5}); err != nil {
		t.Fatal(err)
	}
	tr.sync(t.Context())
	c.Advance(time.Hour + time.Minute)
	event(tr, c, unlimited, mailroom.SiteDelivered)
	if s := state(t, tr, unlimited); s.Rate == 0 || s.MaxConnections != 2 {
		t.Fatalf("just after an hour's suspension: rate %v, %d connections; want the learned rate and 2", s.Rate, s.MaxConnections)
	}
	c.Advance(QuietLift)
	event(tr, c, unlimited, mailroom.SiteDelivered)
	if s := state(t, tr, unlimited); s.Rate != 0 || s.MaxConnections != 3 {
		t.Fatalf("%v after the suspension: rate %v, %d connections; want no limit and 3", QuietLift, s.Rate, s.MaxConnections)
	}
}
