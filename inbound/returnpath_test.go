package inbound_test

import (
	"strings"
	"testing"
	"time"

	"github.com/mailroom/mailroom"
	"github.com/mailroom/mailroom/inbound"
)

func TestReturnPathTokens(t *testing.T) {
	p := inbound.ReturnPaths{Key: []byte("k1")}
	id := mailroom.NewID(mailroom.PrefixMessage, time.Now())
	rcpts := func(string) ([]string, error) { return []string{"ann@example.net", "Bob@example.net"}, nil }
	local := func(addr string) string { l, _, _ := strings.Cut(addr, "@"); return l }

	one := p.EnvelopeSender(id, "bounces.shop.example", []string{"bob@example.net"})
	if !strings.HasSuffix(one, "@bounces.shop.example") || len(local(one)) > 64 {
		t.Fatalf("envelope sender %q", one)
	}
	tok, ok, err := p.Open(local(one), rcpts)
	if err != nil || !ok || tok.MessageID != id || tok.Recipient != "Bob@example.net" {
		t.Fatalf("Open(%q) = %+v %v %v, want the message and Bob", one, tok, ok, err)
	}
	// Upper case (some MTAs fold the local part) opens too.
	if tok, ok, _ := p.Open(strings.ToUpper(local(one)), rcpts); !ok || tok.Recipient != "Bob@example.net" {
		t.Fatalf("an upper-cased token did not open: %+v", tok)
	}
	many := p.EnvelopeSender(id, "bounces.shop.example", []string{"ann@example.net", "bob@example.net"})
	if tok, ok, _ := p.Open(local(many), rcpts); !ok || tok.MessageID != id || tok.Recipient != "" {
		t.Fatalf("a message's token = %+v %v", tok, ok)
	}

	// Forgeries: another message's id with this mac, another key, a
	// changed mac, a token for an address the message does not have.
	other := mailroom.NewID(mailroom.PrefixMessage, time.Now())
	forged := "b-" + strings.TrimPrefix(other, "msg_") + local(one)[len("b-")+26:]
	for _, bad := range []string{
		forged,
		local(inbound.ReturnPaths{Key: []byte("k2")}.EnvelopeSender(id, "x", []string{"bob@example.net"})),
		flipLast(local(one)),
		local(p.EnvelopeSender(id, "x", []string{"carol@example.net"})),
		"b-" + strings.TrimPrefix(id, "msg_"), "postmaster", "b--", "",
	} {
		if tok, ok, _ := p.Open(bad, rcpts); ok {
			t.Errorf("Open(%q) = %+v, want refused", bad, tok)
		}
	}
}

// flipLast changes the last character of s to another of the alphabet.
func flipLast(s string) string {
	if strings.HasSuffix(s, "a") {
		return s[:len(s)-1] + "b"
	}
	return s[:len(s)-1] + "a"
}
