package smtp

import (
	"testing"

	"github.com/mailroom/mailroom"
	"github.com/mailroom/mailroom/smtp/smtptest"
)

// With sites, a session to any MX host of the site carries mail for any
// of its domains, but only mail whose TLS requirement it meets: an
// unverified session is not used for a domain that needs verified TLS,
// nor a verified one to a host that the domain's MTA-STS policy does not
// name. Each is left for mail it fits.
func TestSiteSessionCarriesOnlyMailWhoseTLSItMeets(t *testing.T) {
	w := newTLSWorld(t)
	// mx1's certificate names another host; mx2's and mx3's their own.
	mx1 := startAt(t, "127.0.0.2", 0, smtptest.WithCertificate(w.ca.Issue(t, "mx.other.test")))
	mx2 := startAt(t, "127.0.0.3", mx1.Port(), smtptest.WithCertificate(w.ca.Issue(t, "mx2.bigmail.test")))
	mx3 := startAt(t, "127.0.0.4", mx1.Port(), smtptest.WithCertificate(w.ca.Issue(t, "mx3.bigmail.test")))
	w.dns.SetA("mx1.bigmail.test", "127.0.0.2")
	w.dns.SetA("mx2.bigmail.test", "127.0.0.3")
	w.dns.SetA("mx3.bigmail.test", "127.0.0.4")
	w.dns.SetMX("one.test", 10, "mx1.bigmail.test")
	w.dns.SetMX("two.test", 10, "mx2.bigmail.test")
	w.dns.SetMX("example.test", 10, "mx3.bigmail.test")
	// Room for three connections: none is closed to make room.
	site := bigmail
	site.MaxConnections = 3
	d := newSiteDirect(t, w.dns, mx1.Port(), newTracker(nil, site))
	w.arm(d, nil)

	// Opportunistic mail opens an unverified session to mx1, which the
	// site keeps.
	res := deliver(t, d, delivery("one.test", "a@one.test"))
	want(t, res[0], mailroom.Delivered, 250, "2.0.0", "queued as")
	wantTLS(t, res[0], false, mailroom.TLSPolicyOpportunistic)

	// Enforced mail for another domain of the site does not take it.
	del := delivery("two.test", "b@two.test")
	del.TLSMode = mailroom.TLSEnforced
	res = deliver(t, d, del)
	want(t, res[0], mailroom.Delivered, 250, "2.0.0", "queued as")
	wantTLS(t, res[0], true, mailroom.TLSPolicyEnforced)
	if res[0].MX != "mx2.bigmail.test" || len(mx1.Messages()) != 1 || len(mx2.Messages()) != 1 {
		t.Fatalf("enforced mail went through %s; mx1 got %d, mx2 %d messages; want it on a new session to mx2",
			res[0].MX, len(mx1.Messages()), len(mx2.Messages()))
	}

	// Mail under an enforced MTA-STS policy naming mx3 alone takes
	// neither mx1's session nor mx2's verified one.
	d.MTASTS = &fixedPolicies{lookup: mailroom.MTASTSLookup{Policy: enforcePolicy(mailroom.MTASTSEnforce, "mx3.bigmail.test")}}
	res = deliver(t, d, delivery("example.test", "c@example.test"))
	want(t, res[0], mailroom.Delivered, 250, "2.0.0", "queued as")
	wantTLS(t, res[0], true, mailroom.TLSPolicyMTASTS)
	if res[0].MX != "mx3.bigmail.test" || len(mx3.Messages()) != 1 {
		t.Fatalf("MTA-STS mail went through %s, want mx3", res[0].MX)
	}

	// The sessions it did not fit were left open for mail they fit.
	d.MTASTS = nil
	res = deliver(t, d, delivery("one.test", "d@one.test"))
	want(t, res[0], mailroom.Delivered, 250, "2.0.0", "queued as")
	if st1, st2 := mx1.Stats(), mx2.Stats(); st1.Connections != 1 || st1.Messages != 2 || st2.Connections != 1 || st2.Open != 1 {
		t.Errorf("mx1 %+v, mx2 %+v: want mx1's one session reused, mx2's still open", st1, st2)
	}

	// Enforced mail for mx1's own domain goes over a verified session of
	// the site (mx2's or mx3's), never mx1's.
	del = delivery("one.test", "e@one.test")
	del.TLSMode = mailroom.TLSEnforced
	res = deliver(t, d, del)
	want(t, res[0], mailroom.Delivered, 250, "2.0.0", "queued as")
	wantTLS(t, res[0], true, mailroom.TLSPolicyEnforced)
	if st := mx1.Stats(); res[0].MX == "mx1.bigmail.test" || st.MailCommands != 2 {
		t.Errorf("delivered through %s, mx1 %+v; want another host of the site", res[0].MX, st)
	}
}

// With sites, mail that needs verified TLS and finds no host of its site
// that gives it waits (tls_required, naming the site), and nothing of it
// is sent.
func TestSiteDefersMailNoHostQualifiesFor(t *testing.T) {
	w := newTLSWorld(t)
	mx1 := startAt(t, "127.0.0.2", 0, smtptest.WithCertificate(w.ca.Issue(t, "mx.other.test")))
	w.dns.SetA("mx1.bigmail.test", "127.0.0.2")
	w.dns.SetMX("example.test", 10, "mx1.bigmail.test")
	d := newSiteDirect(t, w.dns, mx1.Port(), newTracker(nil, bigmail))
	w.arm(d, nil)
	del := delivery("example.test", "a@example.test")
	del.TLSMode = mailroom.TLSEnforced

	res := deliver(t, d, del)
	wantTLSRequired(t, res, "mx1.bigmail.test: certificate not valid for mx1.bigmail.test")
	wantSite(t, res, "bigmail")
	wantNothingSent(t, mx1)
	wantObserved(t, w.observer.only(t), mailroom.TLSPolicyEnforced, mailroom.TLSRefused, mailroom.TLSFailCertificateHostMismatch, "mx1.bigmail.test")
}
