package inbound_test

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base32"
	"strings"
	"testing"
	"time"

	"github.com/mailroom/mailroom"
	"github.com/mailroom/mailroom/inbound"
)

// sent is a message of shop.example to the addresses, as the log holds it.
func sent(id string, to ...string) func(string) (*mailroom.Message, error) {
	m := &mailroom.Message{ID: id, Domain: "shop.example"}
	for _, a := range to {
		m.Recipients = append(m.Recipients, &mailroom.Recipient{Address: a})
	}
	return func(got string) (*mailroom.Message, error) {
		if got != id {
			return nil, nil
		}
		return m, nil
	}
}

func localPart(addr string) string { l, _, _ := strings.Cut(addr, "@"); return l }

// legacyToken is a return path of the older form, written here from its
// definition so that the test pins what mail already sent carries:
// "b-<message>-<mac>", the mac over the message id and the one recipient
// ("" for the whole message).
func legacyToken(key []byte, messageID, recipient string) string {
	m := hmac.New(sha256.New, key)
	m.Write([]byte(messageID))
	m.Write([]byte{0})
	m.Write([]byte(strings.ToLower(recipient)))
	mac := base32.StdEncoding.WithPadding(base32.NoPadding).EncodeToString(m.Sum(nil)[:10])
	return "b-" + strings.TrimPrefix(messageID, mailroom.PrefixMessage) + "-" + strings.ToLower(mac)
}

func TestReturnPathTokens(t *testing.T) {
	p := inbound.ReturnPaths{Key: []byte("k1")}
	const rp = "bounces.shop.example"
	id := mailroom.NewID(mailroom.PrefixMessage, time.Now())
	msg := sent(id, "ann@example.net", "Bob@example.net", "carol@example.org")

	one := p.EnvelopeSender(id, rp, []string{"bob@example.net"})
	if !strings.HasSuffix(one, "@"+rp) || len(localPart(one)) > 64 {
		t.Fatalf("envelope sender %q", one)
	}
	tok, ok, err := p.Open(localPart(one), rp, msg)
	if err != nil || !ok || tok.MessageID != id || tok.Recipient != "Bob@example.net" || tok.Legacy {
		t.Fatalf("Open(%q) = %+v %v %v, want the message and Bob", one, tok, ok, err)
	}
	if !tok.Covers("bob@EXAMPLE.net") || tok.Covers("ann@example.net") {
		t.Fatalf("a one-recipient token covers another: %+v", tok)
	}
	// Upper case (some MTAs fold the local part and the domain) opens too.
	if tok, ok, _ := p.Open(strings.ToUpper(localPart(one)), "BOUNCES.shop.example.", msg); !ok || tok.Recipient != "Bob@example.net" {
		t.Fatalf("an upper-cased token did not open: %+v", tok)
	}

	// A transaction to two recipients at example.net covers example.net's
	// recipients, not carol at example.org.
	group := p.EnvelopeSender(id, rp, []string{"ann@example.net", "bob@example.net"})
	tok, ok, _ = p.Open(localPart(group), rp, msg)
	if !ok || tok.MessageID != id || tok.Recipient != "" || tok.Domain != "example.net" {
		t.Fatalf("a domain group's token = %+v %v", tok, ok)
	}
	if !tok.Covers("Ann@Example.NET") || !tok.Covers("bob@example.net") || tok.Covers("carol@example.org") {
		t.Fatalf("a domain group's token covers the wrong recipients: %+v", tok)
	}
	if len(localPart(group)) > 64 {
		t.Fatalf("local part of %d octets", len(localPart(group)))
	}
	// Recipients of several domains (not what delivery gives): the first.
	mixed := p.EnvelopeSender(id, rp, []string{"ann@example.net", "carol@example.org"})
	if tok, ok, _ := p.Open(localPart(mixed), rp, msg); !ok || tok.Recipient != "ann@example.net" || tok.Covers("carol@example.org") {
		t.Fatalf("a token of mixed recipients = %+v %v, want ann alone", tok, ok)
	}

	// Forgeries: another message's id with this mac, another key, a
	// changed mac, a token for an address or a domain the message does not
	// have, a gone message, and a good token at another bounce subdomain.
	other := mailroom.NewID(mailroom.PrefixMessage, time.Now())
	forged := "b2-" + strings.TrimPrefix(other, "msg_") + localPart(one)[len("b2-")+26:]
	for _, c := range []struct{ local, at string }{
		{forged, rp},
		{localPart(inbound.ReturnPaths{Key: []byte("k2")}.EnvelopeSender(id, rp, []string{"bob@example.net"})), rp},
		{flipLast(localPart(one)), rp},
		{localPart(p.EnvelopeSender(id, rp, []string{"dave@example.com"})), rp},
		{localPart(p.EnvelopeSender(id, rp, []string{"dave@example.com", "erin@example.com"})), rp},
		{localPart(one), "bounces.other.example"},
		{localPart(group), "bounces.other.example"},
		{"b2-" + strings.TrimPrefix(id, "msg_"), rp}, {"postmaster", rp}, {"b2--", rp}, {"b--", rp}, {"", rp},
	} {
		if tok, ok, _ := p.Open(c.local, c.at, msg); ok {
			t.Errorf("Open(%q at %s) = %+v, want refused", c.local, c.at, tok)
		}
	}
	if tok, ok, _ := p.Open(localPart(one), rp, sent("msg_gone")); ok {
		t.Errorf("a token of a message that is gone opened: %+v", tok)
	}
}

// Tokens of the older form, on mail sent before the current one, open
// only at the bounce subdomain of the message's sending domain; a
// one-recipient token covers its recipient, a whole-message token the
// recipients of the one domain with several, and nobody when several
// domains have several.
func TestLegacyReturnPathTokens(t *testing.T) {
	key := []byte("k1")
	p := inbound.ReturnPaths{Key: key}
	const rp = "bounces.shop.example"
	id := mailroom.NewID(mailroom.PrefixMessage, time.Now())
	msg := sent(id, "ann@example.net", "bob@example.net", "carol@example.org")

	tok, ok, err := p.Open(legacyToken(key, id, "carol@example.org"), rp, msg)
	if err != nil || !ok || tok.Recipient != "carol@example.org" || !tok.Legacy || tok.Covers("ann@example.net") {
		t.Fatalf("a legacy one-recipient token = %+v %v %v", tok, ok, err)
	}
	tok, ok, _ = p.Open(legacyToken(key, id, ""), rp, msg)
	if !ok || tok.Domain != "example.net" || !tok.Covers("bob@example.net") || tok.Covers("carol@example.org") {
		t.Fatalf("a legacy whole-message token = %+v %v, want example.net's recipients", tok, ok)
	}
	// Honoured only at the sending domain's bounce subdomain, as the
	// domain service names it.
	for _, at := range []string{"bounces.other.example", "bounces.x.shop.example", "shop.example"} {
		if tok, ok, _ := p.Open(legacyToken(key, id, "carol@example.org"), at, msg); ok {
			t.Errorf("a legacy token opened at %s: %+v", at, tok)
		}
	}
	custom := inbound.ReturnPaths{Key: key, BounceSubdomain: func(d string) string { return "rp." + d }}
	if _, ok, _ := custom.Open(legacyToken(key, id, "carol@example.org"), "rp.shop.example", msg); !ok {
		t.Error("a legacy token did not open at the bounce subdomain BounceSubdomain names")
	}
	if _, ok, _ := custom.Open(legacyToken(key, id, "carol@example.org"), rp, msg); ok {
		t.Error("a legacy token opened at a bounce subdomain BounceSubdomain does not name")
	}
	// Two domains with several recipients each: the same whole-message
	// token went to both, so it can speak for neither.
	both := sent(id, "ann@example.net", "bob@example.net", "carol@example.org", "dave@example.org")
	if tok, ok, _ := p.Open(legacyToken(key, id, ""), rp, both); ok {
		t.Errorf("an ambiguous legacy whole-message token opened: %+v", tok)
	}
	if tok, ok, _ := p.Open(legacyToken(key, id, ""), rp, sent(id, "ann@example.net", "carol@example.org")); ok {
		t.Errorf("a legacy whole-message token of a message with no shared domain opened: %+v", tok)
	}
}

// flipLast changes the last character of s to another of the alphabet.
func flipLast(s string) string {
	if strings.HasSuffix(s, "a") {
		return s[:len(s)-1] + "b"
	}
	return s[:len(s)-1] + "a"
}
