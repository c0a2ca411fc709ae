package compose

import (
	"bytes"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/mailroom/mailroom"
)

// trackedHTML is HTML as clients send it, made to stress quoted-printable:
// LF line breaks, a line far over 76 characters, "=" in attributes,
// non-ASCII, whitespace at a line's end, an inline image and links.
const trackedHTML = "<html><body>\n<p>Grüße, Zoë — 東京 order #42 has <b>shipped</b>.</p>   \n" +
	`<p><a href="https://shop.example/orders/42?utm=mail&amp;x=1#top">Your order</a> · ` +
	`<a href="https://shop.example/help">Help</a> · <a href="mailto:help@example.com">Mail us</a> · ` +
	`a very long line that goes on and on well past seventy-six characters, as HTML from editors does</p>` + "\n" +
	`<img src="cid:logo@example.com" alt="logo">` + "\n</body></html>\n"

// trackedMessage is a tracked message with an attachment and an inline
// image: the HTML part sits inside multipart/alternative inside
// multipart/related inside multipart/mixed.
func trackedMessage() *mailroom.Message {
	m := testMessage()
	m.HTML = trackedHTML
	m.Tracking = mailroom.Tracking{Opens: true, Clicks: true}
	m.Attachments = []mailroom.Attachment{invoice, logo}
	return m
}

// recipientHTML stands in for package tracking's TrackedHTML.For: each
// http(s) link through the recipient's click address and a pixel at the
// end, as the real tracker writes them.
func recipientHTML(html, rcpt string) string {
	n := 0
	for _, l := range []string{"https://shop.example/orders/42?utm=mail&amp;x=1#top", "https://shop.example/help"} {
		html = strings.Replace(html, `"`+l+`"`, fmt.Sprintf(`"https://mail.example.com/t/c/%s-%d"`, tokenOf(rcpt), n), 1)
		n++
	}
	return strings.Replace(html, "</body>", `<img src="https://mail.example.com/t/o/`+tokenOf(rcpt)+`" width="1" height="1" alt="">`+"</body>", 1)
}

// tokenOf is a long, recipient-specific token, like a sealed one.
func tokenOf(rcpt string) string {
	return strings.Repeat(strings.NewReplacer("@", "_", ".", "_").Replace(rcpt), 4)
}

// trackedCopy is rcpt's copy of the tracked message whose common part is
// base, with fields in front, and the maker that made it.
func trackedCopy(t *testing.T, base []byte, key mailroom.DKIMKey, fields []mailroom.Header, rcpt string) ([]byte, mailroom.CopyMaker) {
	t.Helper()
	copies, err := testComposer().Copies(base, key)
	if err != nil {
		t.Fatal(err)
	}
	raw, err := copies.Copy(fields, recipientHTML(copies.HTML(), rcpt))
	if err != nil {
		t.Fatal(err)
	}
	return raw, copies
}

// A tracked message is composed per recipient: its stored common part is
// unsigned and holds the client's HTML (what the log's raw view shows),
// and CopyMaker.HTML gives that HTML back, decoded.
func TestTrackedMessageIsComposedPerRecipient(t *testing.T) {
	key, _ := testDomainKey()
	base := mustCompose(t, trackedMessage())
	if mailroom.IsSigned(base) || bytes.Contains(base, []byte("DKIM-Signature")) {
		t.Fatal("the common part of tracked mail is signed")
	}
	if got := string(parse(t, base).find("text/html").body); got != strings.ReplaceAll(trackedHTML, "\n", "\r\n") {
		t.Fatalf("the common part's HTML is %q, want the client's", got)
	}
	copies, err := testComposer().Copies(base, key)
	if err != nil {
		t.Fatal(err)
	}
	// Quoted-printable writes line breaks as CRLF (RFC 2045 §6.7).
	if got, want := copies.HTML(), strings.ReplaceAll(trackedHTML, "\n", "\r\n"); got != want {
		t.Fatalf("HTML() = %q, want %q", got, want)
	}

	// Nothing tracked, or nothing to track (no HTML part: the text part
	// is never rewritten): signed once, as ever.
	for name, m := range map[string]*mailroom.Message{
		"untracked": func() *mailroom.Message { m := trackedMessage(); m.Tracking = mailroom.Tracking{}; return m }(),
		"text only": func() *mailroom.Message { m := trackedMessage(); m.HTML = ""; return m }(),
	} {
		if !mailroom.IsSigned(mustCompose(t, m)) {
			t.Errorf("%s: not signed once", name)
		}
	}
	// A message without an HTML part has no HTML to give a copy.
	textOnly := testMessage()
	textOnly.HTML, textOnly.Category = "", mailroom.CategoryMarketing
	copies, err = testComposer().Copies(mustCompose(t, textOnly), key)
	if err != nil {
		t.Fatal(err)
	}
	if copies.HTML() != "" {
		t.Error("HTML() of a text-only message is not empty")
	}
	if _, err := copies.Copy(nil, "<p>x</p>"); err == nil {
		t.Error("a copy with HTML of a text-only message was made")
	}
}

// Each recipient's tracked copy carries its own HTML, verifies as a
// receiver checks it (go-msgauth and dkimpy), and differs from another
// recipient's in its HTML part and signature alone: the text part, the
// attachment and the inline image are the common part's, byte for byte.
func TestTrackedCopiesVerifyAndDifferOnlyInHTML(t *testing.T) {
	requireDKIMpy(t)
	key, _ := testDomainKey()
	m := trackedMessage()
	base := mustCompose(t, m)
	body := bytes.Index(base, []byte("\r\n\r\n")) + 4
	start, end, ok := htmlPart(base[body:])
	if !ok {
		t.Fatal("no HTML part found in the common part")
	}
	start, end = body+start, body+end
	common := parse(t, base)

	htmlParts := map[string][]byte{}
	for _, rcpt := range []string{"bob@example.net", "carol@example.org"} {
		raw, _ := trackedCopy(t, base, key, nil, rcpt)
		v := verifyOne(t, raw)
		if v.Domain != "example.com" {
			t.Errorf("%s: d=%s", rcpt, v.Domain)
		}
		if ok, out := dkimpy(t, raw); !ok {
			t.Fatalf("%s: dkimpy rejects the copy: %s", rcpt, out)
		}
		// The signature, then the common part with another HTML part.
		rest := raw[bytes.Index(raw, []byte("\r\nFrom: "))+2:]
		tail := len(base) - end
		if !bytes.Equal(rest[:start], base[:start]) || !bytes.Equal(rest[len(rest)-tail:], base[end:]) {
			t.Fatalf("%s: the copy differs from the common part outside its HTML part", rcpt)
		}
		htmlParts[rcpt] = rest[start : len(rest)-tail]

		got := parse(t, raw)
		if got.shape() != common.shape() {
			t.Fatalf("%s: shape %s, want %s", rcpt, got.shape(), common.shape())
		}
		want := strings.ReplaceAll(recipientHTML(trackedHTML, rcpt), "\n", "\r\n")
		if html := string(got.find("text/html").body); html != want {
			t.Errorf("%s: HTML part %q, want %q", rcpt, html, want)
		}
		if !bytes.Equal(got.find("text/plain").body, common.find("text/plain").body) {
			t.Errorf("%s: the text part changed", rcpt)
		}
		if !bytes.Equal(got.find("application/pdf").body, invoice.Content) || !bytes.Equal(got.find("image/png").body, logo.Content) {
			t.Errorf("%s: the attachment or the inline image changed", rcpt)
		}
		for i, line := range strings.Split(string(htmlParts[rcpt]), "\r\n") {
			if len(line) > 76 {
				t.Errorf("%s: line %d of the HTML part is %d octets, over quoted-printable's 76: %q", rcpt, i+1, len(line), line)
			}
		}
	}
	if bytes.Equal(htmlParts["bob@example.net"], htmlParts["carol@example.org"]) {
		t.Fatal("two recipients got the same HTML part")
	}
}

// A link of a tracked copy cannot be pointed elsewhere on the way: a
// copy whose click address is swapped for another recipient's no longer
// verifies.
func TestTrackedCopyFailsWhenItsLinkIsSwapped(t *testing.T) {
	key, _ := testDomainKey()
	raw, _ := trackedCopy(t, mustCompose(t, trackedMessage()), key, nil, "bob@example.net")
	forged := bytes.Replace(raw, []byte(tokenOf("bob@example.net")[:20]), []byte(tokenOf("dan@example.net")[:20]), 1)
	if bytes.Equal(forged, raw) {
		t.Fatal("the swap changed nothing")
	}
	if vs := verify(t, forged); len(vs) != 1 || vs[0].Err == nil {
		t.Fatal("a copy with another recipient's link still verifies")
	}
}

// Tracked marketing mail: each copy has both its unsubscribe pair and its
// HTML, all signed.
func TestTrackedMarketingCopy(t *testing.T) {
	requireDKIMpy(t)
	key, _ := testDomainKey()
	m := trackedMessage()
	m.Category = mailroom.CategoryMarketing
	raw, _ := trackedCopy(t, mustCompose(t, m), key, copyFields(t, m, "bob@example.net"), "bob@example.net")
	v := verifyOne(t, raw)
	if !slices.Contains(v.HeaderKeys, "List-Unsubscribe") || !slices.Contains(v.HeaderKeys, "List-Unsubscribe-Post") {
		t.Errorf("h= %v does not name the unsubscribe pair", v.HeaderKeys)
	}
	if ok, out := dkimpy(t, raw); !ok {
		t.Fatalf("dkimpy rejects the copy: %s", out)
	}
	if !strings.Contains(string(parse(t, raw).find("text/html").body), "/t/o/"+tokenOf("bob@example.net")) ||
		parse(t, raw).header.Get("List-Unsubscribe") == "" {
		t.Error("the copy lacks its pixel or its unsubscribe link")
	}
}

// A copy with html "" is today's marketing copy: the fields and signature
// in front of the common part, unchanged. A copy given the common HTML
// itself is the same bytes: the HTML is encoded exactly as compose
// encodes it, so the body hash is the same.
func TestCopyWithoutHTMLIsTheCommonPart(t *testing.T) {
	key, _ := testDomainKey()
	for name, m := range map[string]*mailroom.Message{
		"tracked": trackedMessage(),
		"marketing": func() *mailroom.Message {
			m := trackedMessage()
			m.Tracking, m.Category = mailroom.Tracking{}, mailroom.CategoryMarketing
			return m
		}(),
	} {
		t.Run(name, func(t *testing.T) {
			base := mustCompose(t, m)
			copies, err := testComposer().Copies(base, key)
			if err != nil {
				t.Fatal(err)
			}
			fields := copyFields(t, m, "bob@example.net")
			plain, err := copies.Copy(fields, "")
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.HasSuffix(plain, base) {
				t.Fatal("a copy without HTML is not its fields and signature in front of the common part")
			}
			verifyOne(t, plain)
			same, err := copies.Copy(fields, copies.HTML())
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(same, plain) {
				t.Fatal("a copy given the common HTML differs from one given none")
			}
		})
	}
}

// The same arguments always give the same bytes, from the same maker or a
// new one, as a retry on another node would make them.
func TestTrackedCopiesAreDeterministic(t *testing.T) {
	key := bothKeys()
	m := trackedMessage()
	m.Category = mailroom.CategoryMarketing
	base, err := testComposer().Compose(m, key)
	if err != nil {
		t.Fatal(err)
	}
	fields := copyFields(t, m, "bob@example.net")
	first, copies := trackedCopy(t, base, key, fields, "bob@example.net")
	again, err := copies.Copy(fields, recipientHTML(copies.HTML(), "bob@example.net"))
	if err != nil {
		t.Fatal(err)
	}
	fresh, _ := trackedCopy(t, base, key, fields, "bob@example.net")
	if !bytes.Equal(first, again) || !bytes.Equal(first, fresh) {
		t.Fatal("the same copy made twice differs")
	}
}

// The body hash taken in pieces, split anywhere (inside a CRLF too), is
// the hash of the whole, and a clone goes on from where it was taken.
func TestRelaxedBodyInPieces(t *testing.T) {
	for _, body := range []string{
		"Hello  \t \r\nworld\t\r\n\r\n\r\n",
		"a \t b   c\r\n  leading\r\n\r\nb\r\n\r\n\r\n\r\nx",
		"line\rwith CR\r\n\r\n \r\nend  ",
	} {
		whole := relaxedBodyHash([]byte(body))
		for i := 0; i <= len(body); i++ {
			for j := i; j <= len(body); j++ {
				r := newRelaxedBody()
				r.write([]byte(body[:i]))
				c, err := r.clone()
				if err != nil {
					t.Fatal(err)
				}
				c.write([]byte(body[i:j]))
				c.write([]byte(body[j:]))
				if c.sum() != whole {
					t.Fatalf("%q split at %d and %d: hash differs", body, i, j)
				}
			}
		}
	}
}
