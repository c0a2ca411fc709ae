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

// startSiteWithClock is a site on an smtptest server, read on a fixed
// clock.
func startSiteWithClock(t *testing.T) (*smtptest.Server, *testSites, *Direct, time.Time) {
	t.Helper()
	mx := smtptest.Start(t)
	dnsSrv := dnstest.Start(t)
	publishMX(dnsSrv, "a.test", 10, "mx1.bigmail.test", "127.0.0.1")
	sites := newTestSites(bigmail)
	now := time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)
	d := newSiteDirect(t, dnsSrv, mx.Port(), sites)
	d.Now = func() time.Time { return now }
	return mx, sites, d, now
}

// A suspended site is sent nothing: its recipients wait for the
// suspension's end.
func TestSiteSuspendedSendsNothing(t *testing.T) {
	mx, sites, d, now := startSiteWithClock(t)
	until := now.Add(5 * time.Minute)
	sites.suspended[bigmailKey] = until

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
		name   string
		after  time.Duration
		within time.Duration
	}{
		{"beyond the longest wait", 10 * time.Minute, testTimeout},
		{"beyond the context's deadline", 5 * time.Second, 200 * time.Millisecond},
	} {
		t.Run(tc.name, func(t *testing.T) {
			mx, sites, d, now := startSiteWithClock(t)
			at := now.Add(tc.after)
			sites.place = func(time.Time) time.Time { return at }

			ctx, cancel := context.WithTimeout(context.Background(), tc.within)
			defer cancel()
			res := d.Deliver(ctx, delivery("a.test", "x@a.test"))
			if r := res[0]; r.Outcome != mailroom.NotAttempted || !r.RetryAt.Equal(at) {
				t.Errorf("%+v, want not attempted, due at %v", r, at)
			}
			wantSite(t, res, "bigmail")
			if sites.cancelled != 1 {
				t.Errorf("%d places given back, want 1", sites.cancelled)
			}
			if st := mx.Stats(); st.Connections != 0 {
				t.Errorf("stats %+v, want nothing sent", st)
			}
		})
	}
}

// A place that comes soon is waited for: the transaction starts no
// sooner.
func TestSiteRatePlaceSoonIsWaitedFor(t *testing.T) {
	port, rs := startReceivers(t, "127.0.0.2")
	dnsSrv := dnstest.Start(t)
	publishMX(dnsSrv, "a.test", 10, "mx1.bigmail.test", "127.0.0.2")
	sites := newTestSites(bigmail)
	var at time.Time
	sites.place = func(now time.Time) time.Time {
		at = now.Add(300 * time.Millisecond)
		return at
	}
	d := newSiteDirect(t, dnsSrv, port, sites)

	want(t, deliver(t, d, delivery("a.test", "x@a.test"))[0], mailroom.Delivered, 250, "2.0.0", "")
	st := rs[0].Stats()
	if len(st.Sessions) != 1 || len(st.Sessions[0].Mails) != 1 {
		t.Fatalf("receiver saw %+v, want one transaction", st.Sessions)
	}
	if mail := st.Sessions[0].Mails[0]; mail.Before(at) {
		t.Errorf("MAIL at %v, before the site's place at %v", mail, at)
	}
	if sites.cancelled != 0 {
		t.Errorf("%d places given back, want none", sites.cancelled)
	}
}

// One suspended source address gives way to another of the pool.
func TestSiteSuspendedSourceGivesWayToAnother(t *testing.T) {
	port, rs := startReceivers(t, "127.0.0.2")
	dnsSrv := dnstest.Start(t)
	publishMX(dnsSrv, "a.test", 10, "mx1.bigmail.test", "127.0.0.2")
	sites := newTestSites(bigmail)
	d := newSiteDirect(t, dnsSrv, port, sites)
	d.Pools = []mailroom.IPPool{testPool}
	sites.suspended[connKey{Site: "bigmail", Source: "127.0.0.10"}] = time.Now().Add(time.Hour)

	for range 3 {
		want(t, deliver(t, d, delivery("a.test", "x@a.test"))[0], mailroom.Delivered, 250, "2.0.0", "")
	}
	for _, s := range rs[0].Stats().Sessions {
		if s.Remote != netip.MustParseAddr("127.0.0.11") {
			t.Errorf("a session from %s, want all from 127.0.0.11", s.Remote)
		}
	}
}
