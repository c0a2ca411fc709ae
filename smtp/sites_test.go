package smtp

import (
	"fmt"
	"testing"

	"github.com/mailroom/mailroom"
	"github.com/mailroom/mailroom/dns/dnstest"
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
	sites := newTestSites(bigmail)
	d := newSiteDirect(t, dnsSrv, mx.Port(), sites)

	done := deliverMany(d, dels...)
	// The site's two connections are taken; the other deliveries wait for
	// them rather than open their own.
	mx.WaitStats(t, testTimeout, func(s smtptest.Stats) bool { return s.Held == 2 })
	for _, release := range releases {
		release()
	}
	for range dels {
		res := next(t, done)
		want(t, res[0], mailroom.Delivered, 250, "2.0.0", "queued as")
		wantSite(t, res, "bigmail")
	}
	if st := mx.Stats(); st.MaxOpen > 2 || st.Connections != 2 || st.Transactions != 6 {
		t.Errorf("stats %+v, want six transactions over the site's two connections", st)
	}

	// The site was told of every connection, and of its end.
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	if n := len(sites.eventsOf(mailroom.SiteConnected)); n != 2 {
		t.Errorf("%d connections told, want 2", n)
	}
	if n := len(sites.eventsOf(mailroom.SiteDelivered)); n != 6 {
		t.Errorf("%d deliveries told, want 6", n)
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
	d := newSiteDirect(t, dnsSrv, mx.Port(), newTestSites(bigmail))

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
	d := newSiteDirect(t, dnsSrv, mx.Port(), newTestSites(p))

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
	sites := newTestSites(bigmail)
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

	sites.setLimit(bigmailKey, 1)
	want(t, deliver(t, d, delivery("a.test", "b@a.test"))[0], mailroom.Delivered, 250, "2.0.0", "queued as")
	mx.WaitStats(t, testTimeout, func(s smtptest.Stats) bool { return s.Open == 1 })
}
