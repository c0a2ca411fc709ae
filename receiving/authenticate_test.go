package receiving

import (
	"bytes"
	"context"
	"testing"
	"time"

	mdns "github.com/miekg/dns"

	"github.com/mailroom/mailroom"
	"github.com/mailroom/mailroom/dns"
	"github.com/mailroom/mailroom/dns/dnstest"
)

// The sending side of the tests: sender.example publishes SPF for
// 192.0.2.10, a DKIM key at sel._domainkey and DMARC p=reject;
// attacker.example publishes SPF for 198.51.100.7 and no DMARC.
const (
	senderIP   = "192.0.2.10"
	attackerIP = "198.51.100.7"
)

func testDNS(t *testing.T) (*dnstest.Server, *dns.Resolver) {
	t.Helper()
	srv := dnstest.Start(t)
	_, record := testKey(t)
	srv.SetTXT("sender.example", "v=spf1 ip4:"+senderIP+" -all")
	srv.SetTXT("sel._domainkey.sender.example", record)
	srv.SetTXT("_dmarc.sender.example", "v=DMARC1; p=reject")
	srv.SetTXT("attacker.example", "v=spf1 ip4:"+attackerIP+" -all")
	return srv, &dns.Resolver{Server: srv.Addr(), Timeout: 2 * time.Second}
}

func testMessage(from string) []byte {
	return []byte("From: Alice <" + from + ">\r\n" +
		"To: support@inbox.example\r\n" +
		"Subject: Hello\r\n" +
		"Date: Sun, 29 Nov 2026 01:00:00 +0000\r\n" +
		"Message-ID: <m1@sender.example>\r\n" +
		"\r\n" +
		"Hi there.\r\n")
}

func inbound(ip, mailFrom string, data []byte) mailroom.InboundMessage {
	return mailroom.InboundMessage{RemoteIP: ip + ":40000", Helo: "mx.sender.example", MailFrom: mailFrom,
		Recipients: []string{"support@inbox.example"}, Data: data, ReceivedAt: time.Now()}
}

func TestAuthenticateAlignedMailPasses(t *testing.T) {
	_, r := testDNS(t)
	data := signWithDKIMpy(t, testMessage("alice@sender.example"), "sender.example", "sel")
	v := Authenticate(context.Background(), r, inbound(senderIP, "bounces@sender.example", data), data)
	want := mailroom.ReceivedAuthentication{SPF: "pass", DKIM: "pass", DMARC: "pass",
		DKIMSignatures: []mailroom.DKIMSignatureResult{{Domain: "sender.example", Selector: "sel", Result: "pass"}}}
	assertAuth(t, v.Auth, want)
	if v.FromDomain != "sender.example" {
		t.Errorf("FromDomain = %q", v.FromDomain)
	}
}

// A relaxed alignment passes DMARC on DKIM alone: the envelope sender is
// a bulk sender's domain, not aligned, whose SPF passes.
func TestAuthenticateDKIMAloneAligns(t *testing.T) {
	srv, r := testDNS(t)
	srv.SetTXT("esp.example", "v=spf1 ip4:"+attackerIP+" -all")
	data := signWithDKIMpy(t, testMessage("alice@news.sender.example"), "sender.example", "sel")
	v := Authenticate(context.Background(), r, inbound(attackerIP, "b@esp.example", data), data)
	if v.Auth.SPF != "pass" || v.Auth.DKIM != "pass" || v.Auth.DMARC != "pass" {
		t.Errorf("verdicts %+v, want spf, dkim and dmarc pass (DKIM of sender.example aligned with news.sender.example)", v.Auth)
	}
}

// A spoofed From of a p=reject domain, sent from the attacker's own
// authorised address and unsigned, fails DMARC: SPF passed, but for a
// domain not aligned with From.
func TestAuthenticateSpoofedFromFailsDMARC(t *testing.T) {
	_, r := testDNS(t)
	data := testMessage("ceo@sender.example")
	v := Authenticate(context.Background(), r, inbound(attackerIP, "x@attacker.example", data), data)
	assertAuth(t, v.Auth, mailroom.ReceivedAuthentication{SPF: "pass", DKIM: "none", DMARC: "fail",
		DKIMSignatures: []mailroom.DKIMSignatureResult{}})
}

// A signed message altered on the way fails DKIM, and with SPF failing
// too (an address not listed), DMARC fails.
func TestAuthenticateAlteredBodyFailsDKIM(t *testing.T) {
	_, r := testDNS(t)
	data := signWithDKIMpy(t, testMessage("alice@sender.example"), "sender.example", "sel")
	data = bytes.Replace(data, []byte("Hi there."), []byte("Pay this."), 1)
	v := Authenticate(context.Background(), r, inbound(attackerIP, "bounces@sender.example", data), data)
	assertAuth(t, v.Auth, mailroom.ReceivedAuthentication{SPF: "fail", DKIM: "fail", DMARC: "fail",
		DKIMSignatures: []mailroom.DKIMSignatureResult{{Domain: "sender.example", Selector: "sel", Result: "fail"}}})
}

// Strict DKIM alignment (adkim=s) does not take the parent's signature
// for a subdomain's From.
func TestAuthenticateStrictAlignment(t *testing.T) {
	srv, r := testDNS(t)
	srv.SetTXT("_dmarc.news.sender.example", "v=DMARC1; p=reject; adkim=s; aspf=s")
	data := signWithDKIMpy(t, testMessage("alice@news.sender.example"), "sender.example", "sel")
	v := Authenticate(context.Background(), r, inbound(senderIP, "bounces@sender.example", data), data)
	if v.Auth.DKIM != "pass" || v.Auth.DMARC != "fail" {
		t.Errorf("verdicts %+v, want dkim pass and dmarc fail (strict alignment)", v.Auth)
	}
}

// A From domain without a policy of its own takes its parent's, found by
// the tree walk; one with none anywhere is none; a DNS failure is
// temperror, never a fail.
func TestAuthenticateDMARCPolicyDiscovery(t *testing.T) {
	srv, r := testDNS(t)
	data := testMessage("a@deep.sub.sender.example")
	v := Authenticate(context.Background(), r, inbound(attackerIP, "x@attacker.example", data), data)
	if v.Auth.DMARC != "fail" {
		t.Errorf("dmarc = %s for a subdomain of a p=reject domain, want fail (the parent's policy applies)", v.Auth.DMARC)
	}
	data = testMessage("a@attacker.example")
	v = Authenticate(context.Background(), r, inbound(senderIP, "x@sender.example", data), data)
	if v.Auth.DMARC != "none" {
		t.Errorf("dmarc = %s for a domain without a policy, want none", v.Auth.DMARC)
	}
	srv.Fail("_dmarc.sender.example", mdns.RcodeServerFailure)
	data = testMessage("ceo@sender.example")
	v = Authenticate(context.Background(), r, inbound(attackerIP, "x@attacker.example", data), data)
	if v.Auth.DMARC != "temperror" {
		t.Errorf("dmarc = %s when the policy lookup fails, want temperror", v.Auth.DMARC)
	}
	if got := treeWalk("a.b.c.d.e.f.g.h.i.example.com"); len(got) != 7 || got[0] != "a.b.c.d.e.f.g.h.i.example.com" || got[1] != "e.f.g.h.i.example.com" || got[6] != "example.com" {
		t.Errorf("treeWalk = %v", got)
	}
}

// The null sender's SPF is the EHLO name's (RFC 7208 §2.4).
func TestAuthenticateNullSenderChecksHelo(t *testing.T) {
	srv, r := testDNS(t)
	srv.SetTXT("mx.sender.example", "v=spf1 ip4:"+senderIP+" -all")
	data := testMessage("mailer-daemon@mx.sender.example")
	v := Authenticate(context.Background(), r, inbound(senderIP, "", data), data)
	if v.Auth.SPF != "pass" {
		t.Errorf("spf = %s for <> from an address the EHLO name's SPF lists, want pass", v.Auth.SPF)
	}
	v = Authenticate(context.Background(), r, inbound(attackerIP, "", data), data)
	if v.Auth.SPF != "fail" {
		t.Errorf("spf = %s for <> from another address, want fail", v.Auth.SPF)
	}
}

func TestAuthenticateTwoFromsIsPermError(t *testing.T) {
	_, r := testDNS(t)
	data := append([]byte("From: a@attacker.example\r\n"), testMessage("ceo@sender.example")...)
	v := Authenticate(context.Background(), r, inbound(attackerIP, "x@attacker.example", data), data)
	if v.Auth.DMARC != "permerror" {
		t.Errorf("dmarc = %s with two From fields, want permerror", v.Auth.DMARC)
	}
}

func assertAuth(t *testing.T, got, want mailroom.ReceivedAuthentication) {
	t.Helper()
	if got.SPF != want.SPF || got.DKIM != want.DKIM || got.DMARC != want.DMARC || len(got.DKIMSignatures) != len(want.DKIMSignatures) {
		t.Fatalf("verdicts %+v, want %+v", got, want)
	}
	for i := range want.DKIMSignatures {
		if got.DKIMSignatures[i] != want.DKIMSignatures[i] {
			t.Errorf("signature %d = %+v, want %+v", i, got.DKIMSignatures[i], want.DKIMSignatures[i])
		}
	}
}
