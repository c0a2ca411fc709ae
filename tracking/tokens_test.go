package tracking

import (
	"strings"
	"testing"
	"time"

	"github.com/mailroom/mailroom"
)

func testTokens(t testing.TB, key string) *Tokens {
	t.Helper()
	tok, err := NewTokens([]byte(key))
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

var testMessageID = mailroom.NewID(mailroom.PrefixMessage, time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC))

func TestTokensRoundTrip(t *testing.T) {
	tokens := testTokens(t, "key one, long enough")
	long := "https://x.example/" + strings.Repeat("ü", (MaxLinkURL-18)/2)
	for _, rcpt := range []string{"ann@example.net", "Mixed.Case+tag@Example.NET", "jürgen@例え.jp", strings.Repeat("a", 64) + "@" + strings.Repeat("b", 250)} {
		p := Pixel{MessageID: testMessageID, Recipient: rcpt}
		tok, err := tokens.SealPixel(p)
		if err != nil {
			t.Fatal(err)
		}
		if got, err := tokens.OpenPixel(tok); err != nil || got != p {
			t.Errorf("pixel %q: opened %+v, %v", rcpt, got, err)
		}
		again, _ := tokens.SealPixel(p)
		if again != tok {
			t.Errorf("pixel %q: sealing twice gave %q and %q; tokens must be deterministic", rcpt, tok, again)
		}
		for _, l := range []Link{
			{MessageID: testMessageID, Recipient: rcpt, Index: 0, URL: "https://x.example/?a=1&b=2#top"},
			{MessageID: testMessageID, Recipient: rcpt, Index: 999, URL: "HTTP://bücher.example/straße?q=ö"},
			{MessageID: testMessageID, Recipient: rcpt, Index: 300, URL: long},
		} {
			tok, err := tokens.SealLink(l)
			if err != nil {
				t.Fatal(err)
			}
			if strings.ContainsAny(tok, "=+/") || len(tok) > maxToken {
				t.Errorf("token of %d characters is not compact unpadded base64url", len(tok))
			}
			if got, err := tokens.OpenLink(tok); err != nil || got != l {
				t.Errorf("link %+v: opened %+v, %v", l, got, err)
			}
			if again, _ := tokens.SealLink(l); again != tok {
				t.Errorf("link %d: sealing twice gave two tokens", l.Index)
			}
		}
	}
	// Different recipients, links and messages make unrelated tokens.
	a, _ := tokens.SealPixel(Pixel{MessageID: testMessageID, Recipient: "ann@example.net"})
	b, _ := tokens.SealPixel(Pixel{MessageID: testMessageID, Recipient: "anne@example.net"})
	if a[:20] == b[:20] {
		t.Errorf("tokens of two recipients share their start: %q, %q", a, b)
	}
}

func TestTokensRefuseWhatTheyCannotHold(t *testing.T) {
	tokens := testTokens(t, "key one, long enough")
	for name, l := range map[string]Link{
		"message id":   {MessageID: "msg_nope", Recipient: "a@x.example", URL: "https://x.example/"},
		"no recipient": {MessageID: testMessageID, URL: "https://x.example/"},
		"long URL":     {MessageID: testMessageID, Recipient: "a@x.example", URL: "https://x.example/" + strings.Repeat("a", MaxLinkURL)},
		"index":        {MessageID: testMessageID, Recipient: "a@x.example", Index: mailroom.MaxTrackedLinks, URL: "https://x.example/"},
		"not UTF-8":    {MessageID: testMessageID, Recipient: "a@x.example", URL: "https://x.example/\xff"},
	} {
		if _, err := tokens.SealLink(l); err == nil {
			t.Errorf("%s: sealed", name)
		}
	}
	if _, err := NewTokens([]byte("short")); err == nil {
		t.Error("a 5-byte key was taken")
	}
}

// Nobody without the key makes a token that opens: every single-bit flip
// of a token's bytes, a token cut short or lengthened, one made under
// another key, an open token at the click route (and the reverse) all
// fail alike, as not_found.
func TestTokensDoNotOpenAltered(t *testing.T) {
	tokens := testTokens(t, "key one, long enough")
	other := testTokens(t, "key two, long enough")
	link := Link{MessageID: testMessageID, Recipient: "ann@example.net", Index: 3, URL: "https://shop.example/order?id=7"}
	click, _ := tokens.SealLink(link)
	pixel, _ := tokens.SealPixel(Pixel{MessageID: testMessageID, Recipient: "ann@example.net"})
	otherClick, _ := other.SealLink(link)
	otherPixel, _ := other.SealPixel(Pixel{MessageID: testMessageID, Recipient: "ann@example.net"})

	refused := func(name string, err error) {
		t.Helper()
		if !mailroom.IsCode(err, mailroom.ECodeNotFound) {
			t.Errorf("%s: %v, want not_found", name, err)
		}
	}
	for _, tok := range []string{click, pixel} {
		raw, err := tokenEncoding.DecodeString(tok)
		if err != nil {
			t.Fatal(err)
		}
		for i := range raw {
			for bit := range 8 {
				b := append([]byte(nil), raw...)
				b[i] ^= 1 << bit
				flipped := tokenEncoding.EncodeToString(b)
				_, err1 := tokens.OpenLink(flipped)
				_, err2 := tokens.OpenPixel(flipped)
				refused("bit flip", err1)
				refused("bit flip", err2)
			}
		}
		for _, bad := range []string{tok[:len(tok)-1], tok[:len(tok)-4], tok + "A", tok + "AAAA", "", "!!" + tok[2:], tok + "=="} {
			_, err1 := tokens.OpenLink(bad)
			_, err2 := tokens.OpenPixel(bad)
			refused("cut or lengthened", err1)
			refused("cut or lengthened", err2)
		}
	}
	_, err := tokens.OpenLink(otherClick)
	refused("other key click", err)
	_, err = tokens.OpenPixel(otherPixel)
	refused("other key pixel", err)
	_, err = tokens.OpenLink(pixel)
	refused("open token at the click route", err)
	_, err = tokens.OpenPixel(click)
	refused("click token at the pixel route", err)
	_, err = tokens.OpenLink(strings.Repeat("A", maxToken+4))
	refused("too long", err)
}

// Re-pointing: a token's link index, address or recipient cannot be
// changed. The plaintext of another link is known to the attacker (it
// is in the mail), so flipping ciphertext bits where the address is
// (CTR's malleability) is what a forger would try; the MAC refuses it.
func TestTokensCannotBeRepointed(t *testing.T) {
	tokens := testTokens(t, "key one, long enough")
	link := Link{MessageID: testMessageID, Recipient: "ann@example.net", Index: 3, URL: "https://shop.example/a"}
	tok, _ := tokens.SealLink(link)
	raw, _ := tokenEncoding.DecodeString(tok)
	evil := "https://evil.example"
	for _, want := range []struct {
		name     string
		from, to string
	}{
		{"address", "https://shop.example", evil},
		{"recipient", "ann@example.net", "bob@example.net"},
	} {
		// Where the plaintext field is, and the XOR that turns it into
		// the forger's text.
		plain := plainOf(t, link)
		at := strings.Index(string(plain), want.from)
		b := append([]byte(nil), raw...)
		for i := range want.to {
			b[1+ivBytes+at+i] ^= plain[at+i] ^ want.to[i]
		}
		if _, err := tokens.OpenLink(tokenEncoding.EncodeToString(b)); !mailroom.IsCode(err, mailroom.ECodeNotFound) {
			t.Errorf("%s re-pointed: %v", want.name, err)
		}
	}
	// The index is the byte after the recipient.
	plain := plainOf(t, link)
	at := strings.Index(string(plain), "ann@example.net") + len("ann@example.net")
	b := append([]byte(nil), raw...)
	b[1+ivBytes+at] ^= 3 ^ 4
	if _, err := tokens.OpenLink(tokenEncoding.EncodeToString(b)); !mailroom.IsCode(err, mailroom.ECodeNotFound) {
		t.Errorf("index re-pointed: %v", err)
	}
}

func plainOf(t *testing.T, l Link) []byte {
	t.Helper()
	b, err := plainHead(kindClick, l.MessageID, l.Recipient, 0)
	if err != nil {
		t.Fatal(err)
	}
	b = append(b, byte(l.Index))
	return append(b, l.URL...)
}
