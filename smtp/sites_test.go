package smtp

import (
	"fmt"
	"testing"

	"github.com/mailroom/mailroom"
	"github.com/mailroom/mailroom/dns/dnstest"
	"github.com/mailroom/mailroom/poll"
	"github.com/mailroom/mailroom/smtp/smtptest"
)

// A provider's many domains are one receiver: their mail shares the
// site's connection cap, whatever the domain and whichever of its MX hosts
// it names, and the site's sessions carry all of it.
func TestSiteDomainsShareOneConnectionCap(t *testing.T) {
	mx := smtptest.Start(t)
	dnsSrv := dnstest.Start(t)
	dnsSrv.SetA("mx1.bigmail.test", "127.0.0.1")
	dnsSrv.SetA("mx2.bigmail.test", "127.0.0.1")
	var dels []*mailroom.Delivery
	var releases []func()
	for i := range 6 {
		domain := fmt.Sprintf("d%d.test", i)
		dnsSrv.SetMX(domain, 10, fmt.Sprintf("mx%d.bigmail.test", 1+i%2))
		rcpt := "a@" + domain
		release := mx.Hold(rcpt)
		defer release()
		releases = append(releases, release)
		dels = append(dels, delivery(domain, rcpt))
	}
	sites := newTracker(nil, bigmail)
	d := newSiteDirect(t, dnsSrv, mx.Port(), sites)

	done := deliverMany(d, dels...)
	// The site's two connections are taken; the other deliveries wait for
	// them rather than open their own, as many as the connections can
	// carry next, and the rest are handed back unattempted (they would
	// only hold the runtime's message slots).
	mx.WaitStats(t, testTimeout, func(s smtptest.Stats) bool { return s.Held == 2 })
	for _, release := range releases {
		release()
	}
	delivered := 0
	for range dels {
		res := next(t, done)
		wantSite(t, res, "bigmail")
		if handedBack(t, res, "bigmail") {
			continue
		}
		want(t, res[0], mailroom.Delivered, 250, "2.0.0", "queued as")
		delivered++
	}
	if delivered < 4 {
		t.Errorf("%d of 6 delivered, want at least the 2 held and the 2 that waited", delivered)
	}
	if st := mx.Stats(); st.MaxOpen > 2 || st.Connections != 2 || st.Transactions != delivered {
		t.Errorf("stats %+v, want %d transactions over the site's two connections", st, delivered)
	}

	// The site was told of every connection, and of its end.
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	if n := len(sites.eventsOf(mailroom.SiteConnected)); n != 2 {
		t.Errorf("%d connections told, want 2", n)
	}
	if n := len(sites.eventsOf(mailroom.SiteDelivered)); n != delivered {
		t.Errorf("%d deliveries told, want %d", n, delivered)
	}
	if n := sites.openNow(bigmailKey); n != 0 {
		t.Errorf("after Close the site counts %d connections open", n)
	}
}

// A session with one MX host of a site carries mail for another domain
// of the site whose MX host is another.
func TestSiteSessionCarriesAnyDomainOfTheSite(t *testing.T) {
	mx := smtptest.Start(t)
	dnsSrv := dnstest.Start(t)
	publishMX(dnsSrv, "a.test", 10, "mx1.bigmail.test", "127.0.0.1")
	publishMX(dnsSrv, "b.test", 10, "mx2.bigmail.test", "127.0.0.1")
	d := newSiteDirect(t, dnsSrv, mx.Port(), newTracker(nil, bigmail))

	want(t, deliver(t, d, delivery("a.test", "x@a.test"))[0], mailroom.Delivered, 250, "2.0.0", "queued as")
	res := deliver(t, d, delivery("b.test", "y@b.test"))
	want(t, res[0], mailroom.Delivered, 250, "2.0.0", "queued as")
	if res[0].MX != "mx1.bigmail.test" {
		t.Errorf("MX %q, want the session with mx1.bigmail.test", res[0].MX)
	}
	if st := mx.Stats(); st.Connections != 1 {
		t.Errorf("stats %+v, want one connection for both domains", st)
	}

	// A destination no profile matches is its own site, named by its MX
	// hosts, and shares nothing with another host.
	publishMX(dnsSrv, "c.test", 10, "mx.c.test", "127.0.0.1")
	res = deliver(t, d, delivery("c.test", "z@c.test"))
	want(t, res[0], mailroom.Delivered, 250, "2.0.0", "queued as")
	wantSite(t, res, "mx.c.test")
	if st := mx.Stats(); st.Connections != 2 {
		t.Errorf("stats %+v, want a connection of its own for mx.c.test", st)
	}
}

// A session closes with QUIT after the site's messages per connection.
func TestSiteMessagesPerConnection(t *testing.T) {
	mx := smtptest.Start(t)
	dnsSrv := dnstest.Start(t)
	publishMX(dnsSrv, "a.test", 10, "mx1.bigmail.test", "127.0.0.1")
	p := bigmail
	p.MaxMessagesPerConnection = 2
	d := newSiteDirect(t, dnsSrv, mx.Port(), newTracker(nil, p))

	for i := range 5 {
		res := deliver(t, d, delivery("a.test", fmt.Sprintf("r%d@a.test", i)))
		want(t, res[0], mailroom.Delivered, 250, "2.0.0", "queued as")
	}
	// 2 + 2 + 1: the fifth message's session stays open for the next.
	mx.WaitStats(t, testTimeout, func(s smtptest.Stats) bool { return s.Open == 1 })
	if st := mx.Stats(); st.Connections != 3 || st.Transactions != 5 {
		t.Errorf("stats %+v, want 5 transactions over 3 connections", st)
	}
}

// Idle sessions beyond a lowered cap are closed.
func TestSiteLoweredCapClosesIdleSessions(t *testing.T) {
	mx := smtptest.Start(t)
	dnsSrv := dnstest.Start(t)
	publishMX(dnsSrv, "a.test", 10, "mx1.bigmail.test", "127.0.0.1")
	sites := newTracker(nil, bigmail)
	d := newSiteDirect(t, dnsSrv, mx.Port(), sites)

	release := mx.Hold("held@a.test")
	done := deliverMany(d, delivery("a.test", "held@a.test"), delivery("a.test", "held@a.test"))
	mx.WaitStats(t, testTimeout, func(s smtptest.Stats) bool { return s.Held == 2 })
	release()
	next(t, done)
	next(t, done)
	if st := mx.Stats(); st.Open != 2 {
		t.Fatalf("stats %+v, want both sessions kept", st)
	}

	// The operator lowers the site's connections (--delivery-policy,
	// SIGHUP).
	lowered := bigmail
	lowered.MaxConnections = 1
	sites.SetPolicy(mailroom.DeliveryPolicy{Default: mailroom.DefaultSiteProfile, Sites: []mailroom.SiteProfile{lowered}})
	want(t, deliver(t, d, delivery("a.test", "b@a.test"))[0], mailroom.Delivered, 250, "2.0.0", "queued as")
	mx.WaitStats(t, testTimeout, func(s smtptest.Stats) bool { return s.Open == 1 })
}

// A delivery to a site whose connections are all in use, with as many
// deliveries waiting for them as they can carry next, is handed back at
// once rather than held: waiting, it would hold one of the delivery
// runtime's message slots, and enough of those, taken by a site that has
// stopped answering, would hold every other site's mail back.
func TestSiteBeyondItsConnectionsHandsBackAtOnce(t *testing.T) {
	mx := smtptest.Start(t)
	dnsSrv := dnstest.Start(t)
	dnsSrv.SetA("mx1.bigmail.test", "127.0.0.1")
	for i := range 3 {
		dnsSrv.SetMX(fmt.Sprintf("d%d.test", i), 10, "mx1.bigmail.test")
	}
	p := bigmail
	p.MaxConnections = 1
	d := newSiteDirect(t, dnsSrv, mx.Port(), newTracker(nil, p))
	release := mx.Hold("a@d0.test")
	defer release()

	held := deliverAsync(d, delivery("d0.test", "a@d0.test"))
	mx.WaitStats(t, testTimeout, func(s smtptest.Stats) bool { return s.Held == 1 })
	waiting := deliverAsync(d, delivery("d1.test", "a@d1.test"))
	poll.Until(t, testTimeout, "the second delivery waits for the site's one connection", func() bool {
		d.eng.conns.mu.Lock()
		defer d.eng.conns.mu.Unlock()
		n := 0
		for _, w := range d.eng.conns.waiting {
			n += w
		}
		return n == 1
	})
	third := next(t, deliverAsync(d, delivery("d2.test", "a@d2.test")))
	if !handedBack(t, third, "bigmail") {
		t.Fatalf("the third delivery: %+v, want handed back while the first holds the connection", third[0])
	}
	release()
	want(t, (<-held)[0], mailroom.Delivered, 250, "2.0.0", "")
	want(t, (<-waiting)[0], mailroom.Delivered, 250, "2.0.0", "")
	if st := mx.Stats(); st.Connections != 1 || st.Transactions != 2 {
		t.Errorf("stats %+v, want the two deliveries over one connection", st)
	}
}
