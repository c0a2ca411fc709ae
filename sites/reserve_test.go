package sites

import (
	"testing"
	"time"

	"github.com/mailroom/mailroom"
)

func TestReservePacesTransactions(t *testing.T) {
	c := newClock()
	tr := newTracker(t, c, Options{})
	key := mailroom.SiteKey{Site: "slow"}
	p := testPolicy()
	p.Sites = append(p.Sites, mailroom.SiteProfile{Name: "slow", MX: []string{"*.slow.test"}, MaxConnections: 2, MaxRate: 60})
	tr.SetPolicy(p)
	now := c.Now()
	var got []time.Duration
	var last mailroom.SiteReservation
	for range 3 {
		last = tr.Reserve(key, now)
		got = append(got, last.At.Sub(now))
	}
	if got[0] != 0 || got[1] != time.Second || got[2] != 2*time.Second {
		t.Fatalf("three reservations at once at 60 a minute wait %v, want 0s 1s 2s", got)
	}
	// ReadyAt takes no place: asked twice, the same answer, and the next
	// reservation gets it.
	for range 2 {
		if at := tr.ReadyAt("slow", now); !at.Equal(now.Add(3 * time.Second)) {
			t.Fatalf("ReadyAt = %v, want 3s on", at.Sub(now))
		}
	}
	// A place given back is taken by the next reservation.
	last.Cancel()
	if r := tr.Reserve(key, now); r.At.Sub(now) != 2*time.Second {
		t.Fatalf("after a cancel the next reservation waits %v, want 2s", r.At.Sub(now))
	}
	c.Advance(time.Minute)
	if at := tr.ReadyAt("slow", c.Now()); !at.IsZero() {
		t.Fatalf("ReadyAt a minute later = %v, want the zero time", at)
	}
	// A burst of about one second's worth: at 600 a minute, ten at once.
	for i := range 12 {
		r := tr.Reserve(limited, c.Now())
		if wait := r.At.Sub(c.Now()); (i < 10) != (wait == 0) {
			t.Fatalf("reservation %d at 600 a minute waits %v; want the first 10 at once", i+1, wait)
		}
	}
}

func TestReadyAtForSitesWithoutKeys(t *testing.T) {
	c := newClock()
	tr := newTracker(t, c, Options{})
	if at := tr.ReadyAt("nobody", c.Now()); !at.IsZero() {
		t.Fatalf("ReadyAt of a site never contacted = %v", at)
	}
	if at := tr.ReadyAt("mx.open.test", c.Now()); !at.IsZero() {
		t.Fatalf("ReadyAt of an unlimited site = %v", at)
	}
}

func TestEachNodeEnforcesItsShare(t *testing.T) {
	c := newClock()
	nodes := 3
	tr := newTracker(t, c, Options{Nodes: func() int { return nodes }})
	if got := tr.Capacity("limited"); got != 1 {
		t.Fatalf("Capacity of a 5-connection site on 3 nodes = %d, want 1", got)
	}
	if got := tr.Capacity("mx.open.test"); got != 3 {
		t.Fatalf("Capacity of a 10-connection site on 3 nodes = %d, want 3", got)
	}
	if s := tr.Reserve(limited, c.Now()); !s.At.Equal(c.Now()) {
		t.Fatal("first reservation waits")
	}
	if s := state(t, tr, limited); s.Rate != 200 || s.MaxRate != 200 || s.MaxConnections != 1 {
		t.Fatalf("limited on 3 nodes: rate %v/%v, connections %d; want 200/200 and 1", s.Rate, s.MaxRate, s.MaxConnections)
	}
	// Two source addresses: a share each.
	tr.MaxConnections(mailroom.SiteKey{Site: "mx.open.test", Source: "192.0.2.1"})
	tr.MaxConnections(mailroom.SiteKey{Site: "mx.open.test", Source: "192.0.2.2"})
	if got := tr.Capacity("mx.open.test"); got != 6 {
		t.Fatalf("Capacity with two source addresses on 3 nodes = %d, want 6", got)
	}
	// A node leaves: the others take its share at the next sync.
	nodes = 1
	tr.sync(t.Context())
	if s := state(t, tr, limited); s.Rate != 600 || s.MaxConnections != 5 {
		t.Fatalf("limited on 1 node: rate %v, connections %d; want 600 and 5", s.Rate, s.MaxConnections)
	}
	if !signalled(tr) {
		t.Fatal("a larger share did not signal Changed")
	}
	nodes = 50
	tr.sync(t.Context())
	if got := tr.MaxConnections(limited); got != 1 {
		t.Fatalf("connections on 50 nodes = %d, want at least 1", got)
	}
}
