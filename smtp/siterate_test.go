package smtp

import (
	"context"
	"net/netip"
	"testing"
	"time"

	"github.com/mailroom/mailroom"
	"github.com/mailroom/mailroom/dns/dnstest"
	"github.com/mailroom/mailroom/smtp/smtptest"
)

// startSiteWithClock is profile p's site on an smtptest server, the
// tracker and the transport both on a clock the test moves.
func startSiteWithClock(t *testing.T, p mailroom.SiteProfile) (*smtptest.Server, *recorder, *Direct, *testClock) {
	t.Helper()
	mx := smtptest.Start(t)
	dnsSrv := dnstest.Start(t)
	publishMX(dnsSrv, "a.test", 10, "mx1.bigmail.test", "127.0.0.1")
	clock := newTestClock()
	sites := newTracker(clock.Now, p)
	d := newSiteDirect(t, dnsSrv, mx.Port(), sites)
	d.Now = clock.Now
	return mx, sites, d, clock
}

// A suspended site is sent nothing: its recipients wait for the
// suspension's end.
func TestSiteSuspendedSendsNothing(t *testing.T) {
	mx, sites, d, clock := startSiteWithClock(t, bigmail)
	until := sites.suspend(t, bigmailKey, clock)

	res := deliver(t, d, delivery("a.test", "x@a.test", "y@a.test"))
	for _, r := range res {
		want(t, r, mailroom.Deferred, 0, "4.4.5", "suspended")
		if r.Reason != mailroom.DeferSiteSuspended || !r.RetryAt.Equal(until) {
			t.Errorf("%+v, want site_suspended until %v", r, until)
		}
	}
	wantSite(t, res, "bigmail")
	if st := mx.Stats(); st.Connections != 0 {
		t.Errorf("stats %+v, want nothing sent to a suspended site", st)
	}
}

// A place in the rate further off than the transport waits is given back,
// and the recipients are handed back unattempted, due then.
func TestSiteRatePlaceFarOffHandsBack(t *testing.T) {
	for _, tc := range []struct {
		name string
		// rate is the site's messages a minute: the second message's place
		// is a minute/rate after the first's.
		rate   float64
		within time.Duration
	}{
		{"beyond the longest wait", 1, testTimeout},
		{"beyond the context's deadline", 12, 200 * time.Millisecond},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := bigmail
			p.MaxRate = tc.rate
			mx, sites, d, clock := startSiteWithClock(t, p)
			want(t, deliver(t, d, delivery("a.test", "x@a.test"))[0], mailroom.Delivered, 250, "2.0.0", "")
			at := clock.Now().Add(time.Duration(float64(time.Minute) / tc.rate))

			ctx, cancel := context.WithTimeout(context.Background(), tc.within)
			defer cancel()
			res := d.Deliver(ctx, delivery("a.test", "y@a.test"))
			if r := res[0]; r.Outcome != mailroom.NotAttempted || !r.RetryAt.Equal(at) {
				t.Errorf("%+v, want not attempted, due at %v", r, at)
			}
			wantSite(t, res, "bigmail")
			// The place was given back: the next one is the same.
			if got := sites.Reserve(bigmailKey, clock.Now()).At; !got.Equal(at) {
				t.Errorf("next place %v, want %v again", got, at)
			}
			if st := mx.Stats(); st.Transactions != 1 {
				t.Errorf("stats %+v, want only the first message sent", st)
			}
		})
	}
}

// A place that comes soon is waited for: the transaction starts no
// sooner.
func TestSiteRatePlaceSoonIsWaitedFor(t *testing.T) {
	mx := smtptest.Start(t)
	dnsSrv := dnstest.Start(t)
	publishMX(dnsSrv, "a.test", 10, "mx1.bigmail.test", "127.0.0.1")
	// Two messages a second, one a connection: each one's connection
	// shows when its transaction was ready to begin.
	p := bigmail
	p.MaxRate = 120
	p.MaxMessagesPerConnection = 1
	sites := newTracker(nil, p)
	d := newSiteDirect(t, dnsSrv, mx.Port(), sites)

	for _, rcpt := range []string{"x@a.test", "y@a.test", "z@a.test"} {
		want(t, deliver(t, d, delivery("a.test", rcpt))[0], mailroom.Delivered, 250, "2.0.0", "")
	}
	places, connected := sites.reserved(), sites.eventsOf(mailroom.SiteConnected)
	if len(places) != 3 || len(connected) != 3 {
		t.Fatalf("%d places and %d connections, want 3 each", len(places), len(connected))
	}
	for i := range places {
		if connected[i].At.Before(places[i]) {
			t.Errorf("connection %d at %v, before its place at %v", i, connected[i].At, places[i])
		}
	}
	// The rate's burst is about a second's worth: the third place was
	// later than the second, and was waited for.
	if !places[2].After(places[1]) || !connected[2].At.After(connected[1].At) {
		t.Errorf("places %v, want the third one later", places)
	}
}

// One suspended source address gives way to another of the pool.
func TestSiteSuspendedSourceGivesWayToAnother(t *testing.T) {
	mx := startAt(t, "127.0.0.2", 0)
	dnsSrv := dnstest.Start(t)
	publishMX(dnsSrv, "a.test", 10, "mx1.bigmail.test", "127.0.0.2")
	clock := newTestClock()
	sites := newTracker(clock.Now, bigmail)
	d := newSiteDirect(t, dnsSrv, mx.Port(), sites)
	d.Now = clock.Now
	d.Pools = []mailroom.IPPool{testPool}
	sites.suspend(t, connKey{Site: "bigmail", Source: "127.0.0.10"}, clock)

	for range 3 {
		want(t, deliver(t, d, delivery("a.test", "x@a.test"))[0], mailroom.Delivered, 250, "2.0.0", "")
	}
	for _, s := range mx.Sessions() {
		if ip := clientIP(t, s); ip != netip.MustParseAddr("127.0.0.11") {
			t.Errorf("a session from %s, want all from 127.0.0.11", ip)
		}
	}
}
