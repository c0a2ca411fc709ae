package compose

import (
	"bytes"
	"io"
	"mime"
	netmail "net/mail"
	"strings"
	"testing"

	"github.com/emersion/go-message/mail"

	"github.com/mailroom/mailroom"
)

// lookalike is text a decoder takes for an encoded-word: written as it is,
// readers would show a CR LF and a header line of the client's making.
const lookalike = "=?utf-8?q?x=0D=0AX-Injected:_yes?="

// decodedFields is every header field of every entity of raw, unfolded and
// decoded the way a lenient reader does: encoded-words found anywhere in
// the value, as Go's mime.WordDecoder (and go-message, and many mail
// clients) find them.
func decodedFields(t *testing.T, raw []byte) map[string][]string {
	t.Helper()
	out := map[string][]string{}
	var walk func(n *node)
	walk = func(n *node) {
		f := n.header.Fields()
		for f.Next() {
			v, err := new(mime.WordDecoder).DecodeHeader(f.Value())
			if err != nil {
				v = f.Value()
			}
			out[f.Key()] = append(out[f.Key()], v)
		}
		for _, p := range n.parts {
			walk(p)
		}
	}
	walk(parse(t, raw))
	return out
}

func TestTextThatLooksEncodedReadsBackLiterally(t *testing.T) {
	for _, text := range []string{
		lookalike,
		"Invoice " + lookalike + " attached",
		"Grüße " + lookalike, // not ASCII as well
		strings.Repeat("=?utf-8?b?DQo=?= ", 12) + "the end", // folds over several lines
	} {
		t.Run(text, func(t *testing.T) {
			m := testMessage()
			m.Subject = text
			m.From.Name = text
			m.To[0].Name = text
			m.Cc[0].Name = text
			m.ReplyTo = []mailroom.Address{{Name: text, Address: "help@example.com"}}
			m.Headers = []mailroom.Header{{Name: "X-Note", Value: text}}
			name := strings.ReplaceAll(text, " ", "_") + ".pdf"
			m.Attachments = []mailroom.Attachment{{Filename: name,
				ContentType: mime.FormatMediaType("application/pdf", map[string]string{"name": name}),
				Content:     []byte("%PDF-1.7")}}
			raw := mustCompose(t, m)

			for key, values := range decodedFields(t, raw) {
				for _, v := range values {
					if strings.ContainsAny(v, "\r\n") {
						t.Errorf("%s decodes to a value with CR or LF: %q", key, v)
					}
				}
			}

			// go-message, as a mail client reads it.
			r, err := mail.CreateReader(bytes.NewReader(raw))
			if err != nil {
				t.Fatal(err)
			}
			if s, err := r.Header.Subject(); err != nil || s != text {
				t.Errorf("Subject = %q, %v; want it literally", s, err)
			}
			for _, key := range []string{"From", "To", "Cc", "Reply-To"} {
				as, err := r.Header.AddressList(key)
				if err != nil || len(as) == 0 || as[0].Name != text {
					t.Errorf("%s = %v, %v; want the display name literally", key, as, err)
				}
			}
			if v, err := r.Header.Text("X-Note"); err != nil || v != text {
				t.Errorf("X-Note = %q, %v; want it literally", v, err)
			}
			var sawAttachment bool
			for {
				p, err := r.NextPart()
				if err == io.EOF {
					break
				}
				if err != nil {
					t.Fatal(err)
				}
				if h, ok := p.Header.(*mail.AttachmentHeader); ok {
					sawAttachment = true
					if got, err := h.Filename(); err != nil || got != name {
						t.Errorf("filename = %q, %v; want %q", got, err, name)
					}
					if _, params, err := h.ContentType(); err != nil || params["name"] != name {
						t.Errorf("Content-Type name = %q, %v; want %q", params["name"], err, name)
					}
				}
			}
			if !sawAttachment {
				t.Error("no attachment")
			}

			// net/mail, which decodes phrases as RFC 5322 has them.
			msg, err := netmail.ReadMessage(bytes.NewReader(raw))
			if err != nil {
				t.Fatal(err)
			}
			if s, err := new(mime.WordDecoder).DecodeHeader(msg.Header.Get("Subject")); err != nil || s != text {
				t.Errorf("net/mail Subject = %q, %v", s, err)
			}
			if to, err := msg.Header.AddressList("To"); err != nil || to[0].Name != text {
				t.Errorf("net/mail To = %v, %v", to, err)
			}

			verifyOne(t, raw)
			assertWireLimits(t, raw)
		})
	}
}

// Encoding is kept for what needs it: plain ASCII, and a lone "=?" with
// no "?=" after it, are written as the client sent them.
func TestOrdinaryASCIIIsNotEncoded(t *testing.T) {
	m := testMessage()
	m.Subject = "Your order #42 is ready (total=? see the ?-page) =?"
	m.From.Name = "Acme Billing"
	m.To[0].Name = "Bob ?= Smith =?"
	m.Headers = []mailroom.Header{{Name: "X-Note", Value: "a=?b"}}
	m.Attachments = []mailroom.Attachment{{Filename: "report?=2026.pdf", Content: []byte("x")}}
	raw := string(mustCompose(t, m))
	for _, want := range []string{
		"\r\nSubject: Your order #42 is ready (total=? see the ?-page) =?\r\n",
		"\r\nFrom: \"Acme Billing\" <zoe@example.com>\r\n",
		"\r\nTo: \"Bob ?= Smith =?\" <bob@example.net>,",
		"\r\nX-Note: a=?b\r\n",
		`filename="report?=2026.pdf"`,
	} {
		if !strings.Contains(raw, want) {
			t.Errorf("raw message lacks %q", want)
		}
	}
	if strings.Contains(raw, "=?utf-8?q?") && !strings.Contains(raw, "=?utf-8?q?Zo=C3=AB") {
		t.Error("an ASCII value was encoded")
	}
}

func TestEncodeWordsRoundTrips(t *testing.T) {
	for _, s := range []string{
		"", "a", " ", "=?", "?=", "_", "a_b c", "\t", lookalike,
		strings.Repeat("=?", 100),
		strings.Repeat("東京", 40),
		strings.Repeat("x", 63) + "ü" + strings.Repeat("€", 30),
	} {
		enc := encodeWords(s)
		got, err := new(mime.WordDecoder).DecodeHeader(enc)
		if err != nil || got != s {
			t.Errorf("encodeWords(%q) = %q, decodes to %q, %v", s, enc, got, err)
		}
		for _, w := range strings.Fields(enc) {
			if len(w) > maxWord {
				t.Errorf("encoded-word of %d characters: %q", len(w), w)
			}
			// RFC 2047 §5(3): what may stand in a phrase.
			if strings.Trim(w[len("=?utf-8?q?"):len(w)-2], "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789!*+-/=_") != "" {
				t.Errorf("encoded-word has a character a phrase may not hold: %q", w)
			}
		}
	}
}

// assertWireLimits checks RFC 5322 §2.1.1 and §2.3: CRLF only, lines of at
// most 998 octets.
func assertWireLimits(t *testing.T, raw []byte) {
	t.Helper()
	for i, line := range bytes.Split(raw, []byte("\r\n")) {
		if bytes.ContainsAny(line, "\r\n") {
			t.Fatalf("line %d has a bare CR or LF: %q", i+1, line)
		}
		if len(line) > 998 {
			t.Fatalf("line %d is %d octets: %.80q…", i+1, len(line), line)
		}
	}
}

// The longest file name the API takes, every byte of it needing escape,
// still makes lines of at most 998 octets and comes back whole.
func TestLongLookalikeFilename(t *testing.T) {
	name := strings.Repeat("=?", 127) + "=" // 255 octets
	m := testMessage()
	m.Attachments = []mailroom.Attachment{{Filename: name, Content: []byte("x")}}
	raw := mustCompose(t, m)
	assertWireLimits(t, raw)
	att := parse(t, raw).leaves()[2]
	if _, params := att.disposition(); params["filename"] == "" {
		t.Fatal("no filename")
	}
	r, err := mail.CreateReader(bytes.NewReader(raw))
	if err != nil {
		t.Fatal(err)
	}
	for {
		p, err := r.NextPart()
		if err != nil {
			t.Fatal(err)
		}
		if h, ok := p.Header.(*mail.AttachmentHeader); ok {
			if got, err := h.Filename(); err != nil || got != name {
				t.Errorf("filename = %q, %v", got, err)
			}
			break
		}
	}
	verifyOne(t, raw)
}
