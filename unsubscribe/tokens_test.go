package unsubscribe

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/mailroom/mailroom"
)

func testUnsubscribe(address string) mailroom.Unsubscribe {
	now := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	return mailroom.Unsubscribe{AccountID: mailroom.NewID(mailroom.PrefixAccount, now), MessageID: mailroom.NewID(mailroom.PrefixMessage, now), Address: address}
}

func TestUnsubscribeTokenRoundTrip(t *testing.T) {
	tokens := Tokens{Key: []byte("key one")}
	for _, addr := range []string{
		"ann@example.net",
		"Mixed.Case+tag@Example.NET",
		"jürgen@例え.jp",
		strings.Repeat("a", 64) + "@" + strings.Repeat("b", 63) + "." + strings.Repeat("c", 63) + "." + strings.Repeat("d", 57) + ".example",
	} {
		u := testUnsubscribe(addr)
		tok, err := tokens.Token(u)
		if err != nil {
			t.Fatalf("%s: %v", addr, err)
		}
		if strings.ContainsAny(tok, "=+/") || len(tok) > maxUnsubscribeToken {
			t.Errorf("%s: token %q is not compact unpadded base64url", addr, tok)
		}
		got, err := tokens.Open(tok)
		if err != nil || got != u {
			t.Errorf("%s: opened %+v, %v; want %+v", addr, got, err, u)
		}
	}
}

// A token that was altered anywhere, cut short, made under another key,
// or is not a token at all is not_found: nobody can make the link of
// another address, message or account.
func TestUnsubscribeTokenDoesNotVerify(t *testing.T) {
	tokens := Tokens{Key: []byte("key one")}
	u := testUnsubscribe("ann@example.net")
	tok, _ := tokens.Token(u)
	other, _ := Tokens{Key: []byte("key two")}.Token(u)
	// Ann's mac with Bob's address.
	raw, _ := unsubscribeEncoding.DecodeString(tok)
	spliced := unsubscribeEncoding.EncodeToString(append(raw[:len(raw)-len(u.Address)], "bob@example.net"...))
	cases := map[string]string{
		"other key": other, "spliced": spliced, "cut short": tok[:len(tok)-3], "empty": "",
		"padded": tok + "==", "too long": strings.Repeat("A", maxUnsubscribeToken+1), "not base64": "!!" + tok[2:],
		"message id as token": u.MessageID,
	}
	for i := range tok {
		b := []byte(tok)
		if b[i] == 'A' {
			b[i] = 'B'
		} else {
			b[i] = 'A'
		}
		cases[fmt.Sprintf("character %d changed", i)] = string(b)
	}
	for name, bad := range cases {
		if got, err := tokens.Open(bad); !mailroom.IsCode(err, mailroom.ECodeNotFound) {
			t.Errorf("%s: opened %+v, %v; want not_found", name, got, err)
		}
	}
}

func TestUnsubscribeLocalPart(t *testing.T) {
	tokens := Tokens{Key: []byte("key one")}
	u := testUnsubscribe("Ann@Example.net")
	local, err := tokens.LocalPart(u)
	if err != nil {
		t.Fatal(err)
	}
	// RFC 5321 §4.5.3.1.1: a local part has at most 64 octets.
	if len(local) > 64 || !IsUnsubscribeLocalPart(local) || local != strings.ToLower(local) {
		t.Fatalf("local part %q", local)
	}
	m := &mailroom.Message{ID: u.MessageID, AccountID: u.AccountID, Recipients: []*mailroom.Recipient{{Address: "bob@example.net"}, {Address: "Ann@Example.net"}}}
	lookups := 0
	find := func(id string) (*mailroom.Message, error) {
		lookups++
		if id != m.ID {
			return nil, nil
		}
		return m, nil
	}
	got, ok, err := tokens.OpenLocalPart(strings.ToUpper(local), find)
	if err != nil || !ok || got != u {
		t.Fatalf("opened %+v %v %v, want %+v", got, ok, err, u)
	}
	for name, bad := range map[string]string{
		"other key":   func() string { s, _ := (Tokens{Key: []byte("k2")}).LocalPart(u); return s }(),
		"mac altered": local[:len(local)-1] + string("ab"[boolIndex(strings.HasSuffix(local, "a"))]),
		"return path": "b-" + strings.TrimPrefix(u.MessageID, mailroom.PrefixMessage) + "-aaaaaaaaaaaaaaaa",
		"no mac":      "unsubscribe-" + strings.TrimPrefix(u.MessageID, mailroom.PrefixMessage),
	} {
		if _, ok, err := tokens.OpenLocalPart(bad, find); ok || err != nil {
			t.Errorf("%s: %q opened (%v)", name, bad, err)
		}
	}
	// A message that left the log: nothing to match.
	if _, ok, _ := tokens.OpenLocalPart(local, func(string) (*mailroom.Message, error) { return nil, nil }); ok {
		t.Error("opened without its message")
	}
}

func TestUnsubscribeLinksFields(t *testing.T) {
	links := Links{Tokens: Tokens{Key: []byte("k")}, PublicURL: "https://mail.example.com/mr"}
	u := testUnsubscribe("ann@example.net")
	fs, err := links.Fields(u, "bounces.shop.example")
	if err != nil {
		t.Fatal(err)
	}
	tok, _ := links.Tokens.Token(u)
	local, _ := links.Tokens.LocalPart(u)
	want := []mailroom.Header{
		{Name: "List-Unsubscribe", Value: "<https://mail.example.com/mr/v1/unsubscribe/" + tok + ">, <mailto:" + local + "@bounces.shop.example>"},
		{Name: "List-Unsubscribe-Post", Value: "List-Unsubscribe=One-Click"},
	}
	if len(fs) != 2 || fs[0] != want[0] || fs[1] != want[1] {
		t.Fatalf("fields %+v, want %+v", fs, want)
	}
	if _, err := (Links{Tokens: links.Tokens}).Fields(u, "bounces.shop.example"); err == nil {
		t.Error("links made without a public URL")
	}
}

func TestCheckPublicURL(t *testing.T) {
	for in, want := range map[string]string{
		"https://mail.example.com":         "https://mail.example.com",
		"https://mail.example.com/":        "https://mail.example.com",
		"https://mail.example.com:8443":    "https://mail.example.com:8443",
		"https://example.com/mailroom/":    "https://example.com/mailroom",
		"https://[2001:db8::1]:8443":       "https://[2001:db8::1]:8443",
		"https://127.0.0.1:8443":           "https://127.0.0.1:8443",
		"https://example.com/a%20b":        "https://example.com/a%20b",
		"https://mail.example.com/x/../y/": "https://mail.example.com/x/../y",
	} {
		if got, err := CheckPublicURL(in); err != nil || got != want {
			t.Errorf("%q: %q, %v; want %q", in, got, err, want)
		}
	}
	for _, bad := range []string{"", "http://mail.example.com", "mail.example.com", "https://", "https://u:p@x.example",
		"https://x.example/?q=1", "https://x.example/#f", "https://x.example/a>b", "https://x.example/a,b", "ftp://x.example"} {
		if got, err := CheckPublicURL(bad); err == nil {
			t.Errorf("%q accepted as %q", bad, got)
		}
	}
}

func TestUnsubscribeStopsMarketingOnly(t *testing.T) {
	if mailroom.SuppressedUnsubscribe.Stops(mailroom.CategoryTransactional) || !mailroom.SuppressedUnsubscribe.Stops(mailroom.CategoryMarketing) {
		t.Error("an unsubscribe must stop marketing mail and only it")
	}
	for _, r := range []mailroom.SuppressionReason{mailroom.SuppressedHardBounce, mailroom.SuppressedComplaint, mailroom.SuppressedManual} {
		if !r.Stops(mailroom.CategoryTransactional) || !r.Stops(mailroom.CategoryMarketing) {
			t.Errorf("%s must stop all mail", r)
		}
		if !r.Outranks(mailroom.SuppressedUnsubscribe) || mailroom.SuppressedUnsubscribe.Outranks(r) || r.Outranks(mailroom.SuppressedManual) {
			t.Errorf("%s: only an unsubscribe gives way", r)
		}
	}
}

// boolIndex is 1 for true: picks the other letter when the last already is "a".
func boolIndex(b bool) int {
	if b {
		return 1
	}
	return 0
}
