package smtp

import (
	"testing"

	mdns "github.com/miekg/dns"

	"github.com/mailroom/mailroom"
	"github.com/mailroom/mailroom/dns/dnstest"
	"github.com/mailroom/mailroom/smtp/smtptest"
)

func TestDirectFallsBackToAddressWithoutMX(t *testing.T) {
	mx := smtptest.Start(t)
	dnsSrv := dnstest.Start(t)
	dnsSrv.SetA("plain.test", "127.0.0.1") // RFC 5321 §5.1: the implicit MX
	d := newDirect(t, dnsSrv, mx.Port())

	res := deliver(t, d, delivery("plain.test", "a@plain.test"))
	want(t, res[0], mailroom.Delivered, 250, "2.0.0", "queued as")
	if res[0].MX != "plain.test" {
		t.Errorf("MX %q, want the domain itself", res[0].MX)
	}
	if n := len(mx.Messages()); n != 1 {
		t.Fatalf("server received %d messages, want 1", n)
	}
}

func TestDirectBouncesNullMXWithoutConnecting(t *testing.T) {
	mx := smtptest.Start(t)
	dnsSrv := dnstest.Start(t)
	dnsSrv.SetMX("nomail.test", 0, ".")
	// Its address records lead to a live server, which must not be tried.
	dnsSrv.SetA("nomail.test", "127.0.0.1")
	d := newDirect(t, dnsSrv, mx.Port())

	res := deliver(t, d, delivery("nomail.test", "a@nomail.test", "b@nomail.test"))
	for _, r := range res {
		want(t, r, mailroom.Bounced, 556, "5.1.10", "does not accept mail")
	}
	if st := mx.Stats(); st.Connections != 0 {
		t.Errorf("stats %+v, want no connection for a null MX", st)
	}
}

func TestDirectBouncesDomainThatDoesNotExist(t *testing.T) {
	dnsSrv := dnstest.Start(t)
	d := newDirect(t, dnsSrv, closedPort(t))

	res := deliver(t, d, delivery("nowhere.test", "a@nowhere.test"))
	want(t, res[0], mailroom.Bounced, 550, "5.1.2", "nowhere.test")
}

func TestDirectDefersOnDNSFailure(t *testing.T) {
	dnsSrv := dnstest.Start(t)
	dnsSrv.Fail("broken.test", mdns.RcodeServerFailure)
	d := newDirect(t, dnsSrv, closedPort(t))

	res := deliver(t, d, delivery("broken.test", "a@broken.test"))
	want(t, res[0], mailroom.Deferred, 0, "4.4.3", "SERVFAIL")
}

func TestDirectDefersWhenNoHostAnswers(t *testing.T) {
	dnsSrv := dnstest.Start(t)
	publishMX(dnsSrv, "example.test", 10, "mx.example.test", "127.0.0.1")
	d := newDirect(t, dnsSrv, closedPort(t))

	res := deliver(t, d, delivery("example.test", "a@example.test", "b@example.test"))
	for _, r := range res {
		want(t, r, mailroom.Deferred, 0, "4.4.1", "connection refused")
		if r.MX != "mx.example.test" {
			t.Errorf("MX %q, want the host tried", r.MX)
		}
	}
}

func TestDirectTriesNextMXWhenFirstRefuses(t *testing.T) {
	mx := smtptest.Start(t) // listens on 127.0.0.1 only
	dnsSrv := dnstest.Start(t)
	// The preferred host's address refuses connections on the port.
	publishMX(dnsSrv, "example.test", 10, "mx1.example.test", "127.0.0.2")
	publishMX(dnsSrv, "example.test", 20, "mx2.example.test", "127.0.0.1")
	d := newDirect(t, dnsSrv, mx.Port())

	res := deliver(t, d, delivery("example.test", "a@example.test"))
	want(t, res[0], mailroom.Delivered, 250, "2.0.0", "queued as")
	if res[0].MX != "mx2.example.test" {
		t.Errorf("MX %q, want mx2.example.test", res[0].MX)
	}
}

func TestDirectSkipsMXHostWithoutAddress(t *testing.T) {
	dnsSrv := dnstest.Start(t)
	// The first host has no address at all: it is passed over like one
	// that does not answer.
	dnsSrv.SetMX("example.test", 10, "ghost.example.test")
	mx := smtptest.Start(t)
	publishMX(dnsSrv, "example.test", 20, "mx2.example.test", "127.0.0.1")
	d := newDirect(t, dnsSrv, mx.Port())

	res := deliver(t, d, delivery("example.test", "a@example.test"))
	want(t, res[0], mailroom.Delivered, 250, "2.0.0", "queued as")
}
