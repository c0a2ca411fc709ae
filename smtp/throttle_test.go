package smtp

import (
	"fmt"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/mailroom/mailroom"
	"github.com/mailroom/mailroom/dns/dnstest"
	"github.com/mailroom/mailroom/poll"
	"github.com/mailroom/mailroom/smtp/smtptest"
)

// A receiver that answers 421 to connections beyond K: the sender learns
// K from it, and once it has said so never has more than K open.
func TestSiteLearnsConnectionCapFrom421(t *testing.T) {
	const k = 2
	mx := startAt(t, "127.0.0.2", 0, smtptest.WithMaxConnections(k))
	dnsSrv := dnstest.Start(t)
	dnsSrv.SetA("mx.bigmail.test", "127.0.0.2")
	var dels []*mailroom.Delivery
	var rcpts []string
	for i := range 12 {
		domain := fmt.Sprintf("d%d.test", i)
		dnsSrv.SetMX(domain, 10, "mx.bigmail.test")
		dels = append(dels, delivery(domain, "a@"+domain))
		rcpts = append(rcpts, "a@"+domain)
	}
	p := bigmail
	p.MaxConnections = 6
	// A rate that halving leaves fast, so that the test need not wait
	// for places.
	p.MaxRate = 6000
	sites := newTracker(nil, p)
	d := newSiteDirect(t, dnsSrv, mx.Port(), sites)
	start := time.Now()

	release := holdAll(mx, rcpts...)
	defer release()
	done := deliverMany(d, dels[:6]...)
	mx.WaitStats(t, testTimeout, func(s smtptest.Stats) bool { return s.Held == k && s.Refused >= 1 })
	release()
	throttled := 0
	for range 6 {
		res := next(t, done)
		wantSite(t, res, "bigmail")
		if res[0].Outcome == mailroom.Delivered || handedBack(t, res, "bigmail") {
			continue
		}
		throttled++
		want(t, res[0], mailroom.Deferred, 421, "4.7.0", "Too many concurrent connections")
		if res[0].Reason != mailroom.DeferThrottled || res[0].RetryAt.Before(start) || res[0].MX != "mx.bigmail.test" {
			t.Errorf("throttled result %+v, want reason throttled, due at the site's next place", res[0])
		}
	}
	events := sites.eventsOf(mailroom.SiteThrottledOnConnect)
	if throttled == 0 || len(events) != throttled {
		t.Fatalf("%d deliveries refused, %d throttles told; want at least one, each told", throttled, len(events))
	}
	if e := events[0]; e.Code != 421 || e.Enhanced != "4.7.0" || !strings.Contains(e.Text, "Too many") || e.MX != "mx.bigmail.test" {
		t.Errorf("event %+v, want the 421 as the receiver said it", e)
	}
	if n := sites.MaxConnections(bigmailKey); n > k {
		t.Fatalf("the site's limit is %d after the 421s, want at most %d", n, k)
	}

	// Now that it has said so, the sender keeps within K. A refusal on
	// connecting holds new connections back for a moment
	// (sites.ConnectBackoff, ended by a greeting): whether the last word
	// of the first round was a refusal or a greeting is the scheduler's,
	// so the second round starts once the site may open its K again.
	poll.Until(t, testTimeout, "the site's limit back at K", func() bool { return sites.MaxConnections(bigmailKey) == k })
	mx.ResetPeaks()
	refused := mx.Stats().Refused
	release = holdAll(mx, rcpts...)
	defer release()
	done = deliverMany(d, dels[6:]...)
	mx.WaitStats(t, testTimeout, func(s smtptest.Stats) bool { return s.Held == sites.MaxConnections(bigmailKey) })
	release()
	delivered := 0
	for range 6 {
		res := next(t, done)
		if handedBack(t, res, "bigmail") {
			continue
		}
		want(t, res[0], mailroom.Delivered, 250, "2.0.0", "")
		delivered++
	}
	if delivered < k {
		t.Errorf("%d delivered in the second round, want at least the %d the cap carries", delivered, k)
	}
	if st := mx.Stats(); st.MaxAttempted > k || st.Refused != refused {
		t.Errorf("receiver saw %d connections tried at once and refused %d more, want at most %d and none",
			st.MaxAttempted, st.Refused-refused, k)
	}
}

// A throttle on connecting ends the attempt: the next MX host of the site
// would say the same, and is not tried.
func TestSiteThrottleOnConnectTriesNoOtherHost(t *testing.T) {
	mx1 := startAt(t, "127.0.0.2", 0, smtptest.WithMaxConnections(1))
	mx2 := startAt(t, "127.0.0.3", mx1.Port())
	dnsSrv := dnstest.Start(t)
	publishMX(dnsSrv, "a.test", 10, "mx1.bigmail.test", "127.0.0.2")
	publishMX(dnsSrv, "a.test", 20, "mx2.bigmail.test", "127.0.0.3")
	sites := newTracker(nil, bigmail)
	d := newSiteDirect(t, dnsSrv, mx1.Port(), sites)
	source := testPool.Addresses[0]
	d.Pools = []mailroom.IPPool{{Name: "one", Addresses: []mailroom.SourceAddress{source}}}
	// Another client on the same address takes mx1's one connection.
	other := net.Dialer{LocalAddr: &net.TCPAddr{IP: source.IP.AsSlice()}}
	blocker, err := other.Dial("tcp", mx1.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer blocker.Close()
	mx1.WaitStats(t, testTimeout, func(s smtptest.Stats) bool { return s.Open == 1 })

	res := deliver(t, d, delivery("a.test", "x@a.test", "y@a.test"))
	for _, r := range res {
		want(t, r, mailroom.Deferred, 421, "4.7.0", "Too many")
		if r.Reason != mailroom.DeferThrottled || r.MX != "mx1.bigmail.test" || r.RetryAt.IsZero() {
			t.Errorf("%+v, want throttled by mx1.bigmail.test with a time to retry", r)
		}
	}
	if st := mx2.Stats(); st.Connections != 0 {
		t.Errorf("mx2 saw %d connections, want none", st.Connections)
	}
	// Without sites, a refusing host is passed over as before.
	d = newDirect(t, dnsSrv, mx1.Port())
	d.Pools = []mailroom.IPPool{{Name: "one", Addresses: []mailroom.SourceAddress{source}}}
	want(t, deliver(t, d, delivery("a.test", "x@a.test"))[0], mailroom.Delivered, 250, "2.0.0", "")
	if st := mx2.Stats(); st.Messages != 1 {
		t.Errorf("mx2 took %d messages, want the one", st.Messages)
	}
}

// A 4.7.28 at RCPT closes the connection (never pooled) and is told to the
// site; the recipient waits for the site's next place, and the others of
// the transaction go through.
func TestSiteThrottleAtRcptClosesConnection(t *testing.T) {
	mx := smtptest.Start(t)
	dnsSrv := dnstest.Start(t)
	publishMX(dnsSrv, "a.test", 10, "mx1.bigmail.test", "127.0.0.1")
	mx.ReplyOnce("x@a.test", 450, "4.7.28", "Our system has detected an unusual rate of unsolicited mail")
	clock := newTestClock()
	now := clock.Now()
	sites := newTracker(clock.Now, bigmail)
	d := newSiteDirect(t, dnsSrv, mx.Port(), sites)
	d.Now = clock.Now

	res := deliver(t, d, delivery("a.test", "x@a.test", "y@a.test"))
	want(t, res[0], mailroom.Deferred, 450, "4.7.28", "unusual rate")
	// The recipient is due at the site's next free place (now, when it
	// has one now), not on the retry schedule.
	place := sites.ReadyAt("bigmail", now)
	if place.IsZero() {
		place = now
	}
	if res[0].Reason != mailroom.DeferThrottled || !res[0].RetryAt.Equal(place) {
		t.Errorf("%+v, want throttled until the site's next place, %v", res[0], place)
	}
	want(t, res[1], mailroom.Delivered, 250, "2.0.0", "queued as")
	if res[1].Reason != "" || !res[1].RetryAt.IsZero() {
		t.Errorf("%+v, want a plain delivery", res[1])
	}
	wantSite(t, res, "bigmail")
	events := sites.eventsOf(mailroom.SiteThrottled)
	if len(events) != 1 {
		t.Fatalf("%d throttles told, want 1", len(events))
	}
	if e := events[0]; e.Code != 450 || e.Enhanced != "4.7.28" || !strings.Contains(e.Text, "unusual rate") ||
		e.MX != "mx1.bigmail.test" || !e.At.Equal(now) || e.Key != bigmailKey {
		t.Errorf("event %+v, want the 4.7.28 from mx1.bigmail.test", e)
	}
	mx.WaitStats(t, testTimeout, func(s smtptest.Stats) bool { return s.Open == 0 })

	want(t, deliver(t, d, delivery("a.test", "x@a.test"))[0], mailroom.Delivered, 250, "2.0.0", "queued as")
	if st := mx.Stats(); st.Connections != 2 {
		t.Errorf("stats %+v, want a new connection after the throttle", st)
	}
}

// What is and is not a throttle: a greylister's plain 4.7.1 to a first
// attempt is not; later it is; a 5xx never is.
func TestSiteThrottleRule(t *testing.T) {
	for _, tc := range []struct {
		name     string
		code     int
		enhanced string
		text     string
		first    bool
		throttle bool
	}{
		{"greylisting a first attempt", 451, "4.7.1", "Try again later", true, false},
		{"4.7.1 to a later attempt", 451, "4.7.1", "Try again later", false, true},
		{"greylisting text", 450, "4.7.1", "Greylisted, see http://example.test", false, false},
		{"rate text without 4.7", 450, "4.2.1", "The user you are trying to contact is receiving mail at a rate that prevents additional messages from being delivered", true, true},
		{"5xx policy", 550, "5.7.1", "Too many connections", false, false},
		{"plain 4xx", 452, "4.2.2", "Mailbox full", false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			mx := smtptest.Start(t)
			dnsSrv := dnstest.Start(t)
			publishMX(dnsSrv, "a.test", 10, "mx1.bigmail.test", "127.0.0.1")
			mx.ReplyOnce("x@a.test", tc.code, tc.enhanced, tc.text)
			sites := newTracker(nil, bigmail)
			d := newSiteDirect(t, dnsSrv, mx.Port(), sites)
			del := delivery("a.test", "x@a.test")
			del.FirstAttempt = tc.first

			res := deliver(t, d, del)
			throttled := res[0].Reason == mailroom.DeferThrottled
			if throttled != tc.throttle || len(sites.eventsOf(mailroom.SiteThrottled)) != btoi(tc.throttle) {
				t.Errorf("%+v: throttled %v, want %v", res[0], throttled, tc.throttle)
			}
			// A session that was not throttled stays for the next message.
			if st := mx.Stats(); !tc.throttle && st.Open != 1 {
				t.Errorf("stats %+v, want the session kept", st)
			}
		})
	}
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

// The profile's connect timeout bounds the greeting too.
func TestSiteConnectTimeoutBoundsGreeting(t *testing.T) {
	mx := smtptest.Start(t, smtptest.WithDead())
	dnsSrv := dnstest.Start(t)
	publishMX(dnsSrv, "a.test", 10, "mx1.bigmail.test", "127.0.0.1")
	p := bigmail
	p.ConnectTimeout = 50 * time.Millisecond
	d := newSiteDirect(t, dnsSrv, mx.Port(), newTracker(nil, p))
	d.CommandTimeout = time.Hour

	res := deliver(t, d, delivery("a.test", "x@a.test"))
	want(t, res[0], mailroom.Deferred, 0, "4.4.2", "reading the greeting")
	if !strings.Contains(res[0].Response, "timeout") {
		t.Errorf("%q, want the greeting timed out", res[0].Response)
	}
}

// A receiver that refuses every connection is not dialled again at once
// (as many times as deliveries come for it): after a refusal, no new
// connection is made until the site's wait after it has passed, and the
// deliveries meanwhile are handed back, due then.
func TestSiteRefusingConnectionsIsNotRedialledAtOnce(t *testing.T) {
	mx := startAt(t, "127.0.0.2", 0, smtptest.WithMaxConnections(1))
	dnsSrv := dnstest.Start(t)
	publishMX(dnsSrv, "a.test", 10, "mx1.bigmail.test", "127.0.0.2")
	clock := newTestClock()
	sites := newTracker(clock.Now, bigmail)
	d := newSiteDirect(t, dnsSrv, mx.Port(), sites)
	d.Now = clock.Now
	source := testPool.Addresses[0]
	d.Pools = []mailroom.IPPool{{Name: "one", Addresses: []mailroom.SourceAddress{source}}}
	// Another client on the same address holds the receiver's one
	// connection: every connection of ours is refused.
	other := net.Dialer{LocalAddr: &net.TCPAddr{IP: source.IP.AsSlice()}}
	blocker, err := other.Dial("tcp", mx.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer blocker.Close()
	mx.WaitStats(t, testTimeout, func(s smtptest.Stats) bool { return s.Open == 1 })

	for i := range 20 {
		res := deliver(t, d, delivery("a.test", fmt.Sprintf("x%d@a.test", i)))
		if i == 0 {
			want(t, res[0], mailroom.Deferred, 421, "4.7.0", "Too many")
			continue
		}
		if !handedBack(t, res, "bigmail") || !res[0].RetryAt.Equal(clock.Now().Add(time.Second)) {
			t.Fatalf("delivery %d right after a refusal: %+v, want handed back until the wait after it ends", i, res[0])
		}
	}
	if n := mx.Stats().Refused; n != 1 {
		t.Fatalf("the receiver refused %d connections from 20 deliveries at one moment, want 1", n)
	}
	clock.Add(time.Second)
	want(t, deliver(t, d, delivery("a.test", "y@a.test"))[0], mailroom.Deferred, 421, "4.7.0", "Too many")
	if n := mx.Stats().Refused; n != 2 {
		t.Fatalf("after the wait the receiver refused %d connections in all, want 2", n)
	}
}
