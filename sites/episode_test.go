package sites

import (
	"testing"
	"time"

	"github.com/mailroom/mailroom"
)

func TestRepliesWithinASecondHalveTheRateOnce(t *testing.T) {
	c := newClock()
	tr := newTracker(t, c, Options{})
	for range 10 {
		throttle(tr, c, limited, false)
		c.Advance(100 * time.Millisecond)
	}
	if got := state(t, tr, limited).Rate; got != 300 {
		t.Fatalf("rate after ten replies within a second = %v, want 300 (600 halved once)", got)
	}
	c.Advance(time.Second)
	throttle(tr, c, limited, false)
	if got := state(t, tr, limited).Rate; got != 150 {
		t.Fatalf("rate after a second episode = %v, want 150", got)
	}
	if s := state(t, tr, limited); s.SuspendedUntil != nil || len(s.RecentReplies) != RecentReplies {
		t.Fatalf("two episodes: suspended %v, %d replies remembered; want not suspended, the last %d", s.SuspendedUntil, len(s.RecentReplies), RecentReplies)
	}
}

func TestThreeEpisodesInAMinuteSuspendForLongerEachTime(t *testing.T) {
	c := newClock()
	tr := newTracker(t, c, Options{})
	for i, want := range []time.Duration{5 * time.Minute, 10 * time.Minute, 20 * time.Minute, 40 * time.Minute, time.Hour, time.Hour} {
		throttle(tr, c, limited, false)
		c.Advance(20 * time.Second)
		throttle(tr, c, limited, false)
		if !suspendedUntil(tr, c, limited).IsZero() {
			t.Fatalf("suspension %d: suspended after two episodes", i+1)
		}
		c.Advance(20 * time.Second)
		throttle(tr, c, limited, false)
		until := suspendedUntil(tr, c, limited)
		if got := until.Sub(c.Now()); got != want {
			t.Fatalf("suspension %d lasts %v, want %v", i+1, got, want)
		}
		if at := tr.ReadyAt("limited", c.Now()); !at.Equal(until) {
			t.Fatalf("ReadyAt while suspended = %v, want the end %v", at, until)
		}
		// Replies to what was sent before neither extend it nor count
		// toward the next.
		rate := state(t, tr, limited).Rate
		for range SuspendAfter {
			c.Advance(2 * time.Second)
			throttle(tr, c, limited, false)
		}
		if got := suspendedUntil(tr, c, limited); !got.Equal(until) {
			t.Fatalf("replies during the suspension moved its end to %v", got)
		}
		if got := state(t, tr, limited).Rate; got != rate {
			t.Fatalf("replies during the suspension changed the rate from %v to %v", rate, got)
		}
		c.Advance(until.Sub(c.Now()) + 30*time.Minute)
		if got := tr.Reserve(limited, c.Now()); !got.SuspendedUntil.IsZero() {
			t.Fatalf("suspension %d still in force after its end", i+1)
		}
	}
	// An hour and more after the last one ended, the next is the first
	// again.
	c.Advance(time.Hour)
	for range 3 {
		throttle(tr, c, limited, false)
		c.Advance(2 * time.Second)
	}
	if got := suspendedUntil(tr, c, limited).Sub(c.Now()); got != 5*time.Minute-2*time.Second {
		t.Fatalf("a suspension long after the last lasts %v, want 5m", got+2*time.Second)
	}
}

func TestSuspendedKeyReservesNothing(t *testing.T) {
	c := newClock()
	tr := newTracker(t, c, Options{})
	for range 3 {
		throttle(tr, c, limited, false)
		c.Advance(2 * time.Second)
	}
	r := tr.Reserve(limited, c.Now())
	if r.SuspendedUntil.IsZero() || !r.At.IsZero() || r.Cancel == nil {
		t.Fatalf("Reserve on a suspended key = %+v, want SuspendedUntil, no place", r)
	}
	// Another source address of the site is judged on its own.
	other := mailroom.SiteKey{Site: "limited", Source: "192.0.2.7"}
	if r := tr.Reserve(other, c.Now()); !r.SuspendedUntil.IsZero() {
		t.Fatalf("another source address is suspended too: %+v", r)
	}
	if at := tr.ReadyAt("limited", c.Now().Add(time.Second)); !at.IsZero() {
		t.Fatalf("ReadyAt with one source free = %v, want now", at)
	}
}

func TestFirstContactBurstDoesNotSuspend(t *testing.T) {
	c := newClock()
	tr := newTracker(t, c, Options{})
	// Ten connections at once to a receiver that takes three: three are
	// greeted, seven refused with 421, over most of a second.
	for range 3 {
		event(tr, c, unlimited, mailroom.SiteConnected)
		tr.Reserve(unlimited, c.Now())
	}
	for range 7 {
		c.Advance(130 * time.Millisecond)
		throttle(tr, c, unlimited, true)
	}
	s := state(t, tr, unlimited)
	if s.SuspendedUntil != nil {
		t.Fatal("a first contact's burst of 421s suspended the site")
	}
	if s.MaxConnections != 3 {
		t.Fatalf("connection limit after 421s with 3 open = %d, want 3", s.MaxConnections)
	}
	if s.Rate != 0 {
		t.Fatalf("rate after a first contact's burst of 421s on connecting = %v, want none (0): the receiver capped connections, not the rate", s.Rate)
	}
	// A throttle within a session in the same episode says the rate is
	// too high as well: the rate sent at is halved, not below the floor.
	throttle(tr, c, unlimited, false)
	if got := state(t, tr, unlimited).Rate; got != FirstRateFloor {
		t.Fatalf("rate after a throttle within a session = %v, want the floor %v", got, FirstRateFloor)
	}
	if got := tr.Capacity(unlimited.Site); got != 3 {
		t.Fatalf("Capacity = %d, want 3", got)
	}
}

// In a burst, the receiver's refusals are often read before the
// greetings it sent first: connections greeted in the episode after a
// refusal count towards the cap it learns, up to the limit before it.
func TestConnectThrottleCountsGreetingsReadAfterTheRefusal(t *testing.T) {
	c := newClock()
	tr := newTracker(t, c, Options{})
	throttle(tr, c, unlimited, true) // none greeted yet
	if got := limitOf(t, tr, unlimited); got != 1 {
		t.Fatalf("limit after a 421 with none open = %d, want 1", got)
	}
	c.Advance(10 * time.Millisecond)
	for range 3 {
		event(tr, c, unlimited, mailroom.SiteConnected)
	}
	if got := limitOf(t, tr, unlimited); got != 3 {
		t.Fatalf("limit after 3 greetings read after the 421 = %d, want 3", got)
	}
	// Once the episode is over, greetings say nothing of the cap.
	c.Advance(EpisodeWindow + time.Second)
	event(tr, c, unlimited, mailroom.SiteConnected)
	if got := limitOf(t, tr, unlimited); got != 3 {
		t.Fatalf("limit after a greeting past the episode = %d, want it kept at 3", got)
	}
}

func TestConnectThrottleLearnsTheHighestOpenCount(t *testing.T) {
	c := newClock()
	tr := newTracker(t, c, Options{})
	for range 2 {
		event(tr, c, unlimited, mailroom.SiteConnected)
	}
	throttle(tr, c, unlimited, true) // 2 open
	for range 3 {
		event(tr, c, unlimited, mailroom.SiteConnected)
	}
	c.Advance(400 * time.Millisecond)
	throttle(tr, c, unlimited, true) // 5 open, same episode
	for range 3 {
		event(tr, c, unlimited, mailroom.SiteDisconnected)
	}
	c.Advance(400 * time.Millisecond)
	throttle(tr, c, unlimited, true) // 2 open, same episode
	if got := limitOf(t, tr, unlimited); got != 5 {
		t.Fatalf("limit after 421s seeing 2, 5 and 2 open = %d, want the highest, 5", got)
	}
	// A later episode with fewer open lowers it; more open never raises
	// it above the limit before the episode.
	event(tr, c, unlimited, mailroom.SiteDisconnected)
	c.Advance(5 * time.Second)
	throttle(tr, c, unlimited, true) // 1 open
	if got := limitOf(t, tr, unlimited); got != 1 {
		t.Fatalf("limit after a 421 with 1 open = %d, want 1", got)
	}
	c.Advance(SuspendWindow + time.Second) // not a third episode within a minute
	for range 6 {
		event(tr, c, unlimited, mailroom.SiteConnected)
	}
	throttle(tr, c, unlimited, true)
	if s := state(t, tr, unlimited); s.SuspendedUntil != nil {
		t.Fatal("suspended")
	}
	if got := limitOf(t, tr, unlimited); got != 1 {
		t.Fatalf("limit after a 421 with 7 open = %d, want it kept at 1", got)
	}
	// None open: at least 1.
	key := mailroom.SiteKey{Site: "limited", Source: "192.0.2.9"}
	throttle(tr, c, key, true)
	if got := limitOf(t, tr, key); got != 1 {
		t.Fatalf("limit after a 421 with none open = %d, want 1", got)
	}
}

// A receiver that counts over a window of its own goes on refusing for a
// while after the sender has slowed: refusals each within a second of the
// one before are one episode, halving the rate once and never suspending;
// a receiver that refuses without end makes a new episode every
// MaxEpisode, and is suspended after three.
func TestRefusalsInARowAreOneEpisodeUpToMaxEpisode(t *testing.T) {
	c := newClock()
	tr := newTracker(t, c, Options{})
	const before = 600.0 // the limited profile's rate
	for range 16 {       // 8 s of refusals, every 500 ms
		throttle(tr, c, limited, false)
		c.Advance(500 * time.Millisecond)
	}
	s := state(t, tr, limited)
	if s.SuspendedUntil != nil {
		t.Fatal("8 s of refusals in a row suspended the site")
	}
	if s.Rate != before/2 {
		t.Fatalf("rate after 8 s of refusals in a row = %v, want it halved once, %v", s.Rate, before/2)
	}
	for range 2 * int(MaxEpisode/(500*time.Millisecond)) {
		throttle(tr, c, limited, false)
		c.Advance(500 * time.Millisecond)
	}
	if state(t, tr, limited).SuspendedUntil == nil {
		t.Fatalf("a receiver refusing every 500 ms for %v was not suspended", 8*time.Second+2*MaxEpisode)
	}
}

// A receiver that refuses every connection is not dialled again at once:
// each refusal in a row doubles the wait before the next new connection,
// during which the site is not ready for mail no connection carries; a
// greeted connection ends the wait.
func TestRefusalsOnConnectingBackOffNewConnections(t *testing.T) {
	c := newClock()
	tr := newTracker(t, c, Options{})
	for i, wait := range []time.Duration{ConnectBackoff, 2 * ConnectBackoff, 4 * ConnectBackoff} {
		throttle(tr, c, unlimited, true)
		if got := tr.MaxConnections(unlimited); got != 0 {
			t.Fatalf("refusal %d: %d new connections allowed with none open, want none until %v later", i+1, got, wait)
		}
		if got := tr.ReadyAt(unlimited.Site, c.Now()); !got.Equal(c.Now().Add(wait)) {
			t.Fatalf("refusal %d: ReadyAt = %v, want %v later", i+1, got.Sub(c.Now()), wait)
		}
		c.Advance(wait)
		if got := tr.MaxConnections(unlimited); got != 1 {
			t.Fatalf("refusal %d: after the wait %d connections allowed, want the learned 1", i+1, got)
		}
	}
	// Greeted: the wait is over at the next refusal's first step again.
	event(tr, c, unlimited, mailroom.SiteConnected)
	event(tr, c, unlimited, mailroom.SiteDisconnected)
	c.Advance(time.Minute)
	throttle(tr, c, unlimited, true)
	if got := tr.ReadyAt(unlimited.Site, c.Now()); !got.Equal(c.Now().Add(ConnectBackoff)) {
		t.Fatalf("after a greeted connection, a refusal's wait is %v, want %v", got.Sub(c.Now()), ConnectBackoff)
	}
}
