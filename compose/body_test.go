package compose

import (
	"bytes"
	"crypto/rand"
	"io"
	"strings"
	"testing"

	"github.com/emersion/go-message/mail"

	"github.com/mailroom/mailroom"
)

var (
	logo = mailroom.Attachment{Filename: "logo.png", ContentType: "image/png", ContentID: "logo@example.com",
		Content: []byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR fake image bytes \xff\xfe")}
	invoice = mailroom.Attachment{Filename: "Rechnung für Zoë – 請求書.pdf", ContentType: "application/pdf",
		Content: randomBytes(100_000)}
)

func randomBytes(n int) []byte {
	b := make([]byte, n)
	rand.Read(b)
	return b
}

func TestBodyStructure(t *testing.T) {
	for _, c := range []struct {
		name        string
		text, html  string
		attachments []mailroom.Attachment
		want        string
	}{
		{"text", "hi", "", nil, "text/plain"},
		{"html", "", "<p>hi</p>", nil, "multipart/alternative[text/plain text/html]"},
		{"both", "hi", "<p>hi</p>", nil, "multipart/alternative[text/plain text/html]"},
		{"attachment", "hi", "<p>hi</p>", []mailroom.Attachment{invoice},
			"multipart/mixed[multipart/alternative[text/plain text/html] application/pdf]"},
		{"inline", "hi", `<img src="cid:logo@example.com">`, []mailroom.Attachment{logo},
			"multipart/related[multipart/alternative[text/plain text/html] image/png]"},
		{"inline and attachment", "hi", `<img src="cid:logo@example.com">`, []mailroom.Attachment{invoice, logo},
			"multipart/mixed[multipart/related[multipart/alternative[text/plain text/html] image/png] application/pdf]"},
		{"text with attachment", "hi", "", []mailroom.Attachment{invoice}, "multipart/mixed[text/plain application/pdf]"},
	} {
		t.Run(c.name, func(t *testing.T) {
			m := testMessage()
			m.Text, m.HTML, m.Attachments = c.text, c.html, c.attachments
			root := parse(t, mustCompose(t, m))
			if got := root.shape(); got != c.want {
				t.Fatalf("structure\n got %s\nwant %s", got, c.want)
			}
			plain := root.find("text/plain")
			// A message's last line ends in CRLF: in a message of one part
			// that CRLF is the part's own (in a multipart one, the
			// boundary's).
			if c.text != "" && strings.TrimSuffix(string(plain.body), "\r\n") != c.text {
				t.Errorf("text part = %q, want %q", plain.body, c.text)
			}
			if c.html != "" {
				if html := root.find("text/html"); string(html.body) != c.html {
					t.Errorf("html part = %q, want %q", html.body, c.html)
				}
			}
			for _, l := range root.leaves() {
				if strings.HasPrefix(l.mediaType(), "text/") {
					if _, p, _ := l.header.ContentType(); p["charset"] != "utf-8" {
						t.Errorf("%s charset = %q", l.mediaType(), p["charset"])
					}
					if cte := l.header.Get("Content-Transfer-Encoding"); cte != "quoted-printable" {
						t.Errorf("%s encoding = %q", l.mediaType(), cte)
					}
				} else if cte := l.header.Get("Content-Transfer-Encoding"); cte != "base64" {
					t.Errorf("%s encoding = %q", l.mediaType(), cte)
				}
			}
			if strings.HasPrefix(c.want, "multipart/related") || strings.Contains(c.want, "[multipart/related") {
				related := root
				if related.mediaType() != "multipart/related" {
					related = root.parts[0]
				}
				// RFC 2387 §3.1: type names the root part.
				if _, p, _ := related.header.ContentType(); p["type"] != "multipart/alternative" {
					t.Errorf("multipart/related type = %q", p["type"])
				}
			}
		})
	}
}

func TestTextIsGeneratedFromHTMLWhenMissing(t *testing.T) {
	m := testMessage()
	m.Text = ""
	m.HTML = `<h1>Your receipt</h1><p>Total: <b>€12.00</b></p><p><a href="https://example.com/r/1">View it online</a></p>`
	plain := parse(t, mustCompose(t, m)).find("text/plain")
	for _, want := range []string{"Your receipt", "Total: €12.00", "View it online", "https://example.com/r/1"} {
		if !strings.Contains(string(plain.body), want) {
			t.Errorf("generated text %q lacks %q", plain.body, want)
		}
	}
	if strings.Contains(string(plain.body), "<b>") {
		t.Errorf("generated text keeps tags: %q", plain.body)
	}
}

func TestAttachmentsRoundTrip(t *testing.T) {
	m := testMessage()
	m.HTML = `<img src="cid:logo@example.com">`
	m.Attachments = []mailroom.Attachment{invoice, logo}
	raw := mustCompose(t, m)

	r, err := mail.CreateReader(bytes.NewReader(raw))
	if err != nil {
		t.Fatal(err)
	}
	var sawInvoice, sawLogo bool
	for {
		p, err := r.NextPart()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		body, err := io.ReadAll(p.Body)
		if err != nil {
			t.Fatal(err)
		}
		switch h := p.Header.(type) {
		case *mail.AttachmentHeader:
			name, err := h.Filename()
			if err != nil || name != invoice.Filename {
				t.Errorf("attachment filename = %q, %v; want %q", name, err, invoice.Filename)
			}
			if !bytes.Equal(body, invoice.Content) {
				t.Error("attachment bytes differ from what was sent")
			}
			sawInvoice = true
		case *mail.InlineHeader:
			if h.Get("Content-ID") != "<logo@example.com>" {
				continue // the text parts
			}
			if d, params, _ := h.ContentDisposition(); d != "inline" || params["filename"] != "logo.png" {
				t.Errorf("inline disposition = %q %v", d, params)
			}
			if !bytes.Equal(body, logo.Content) {
				t.Error("inline image bytes differ from what was sent")
			}
			sawLogo = true
		}
	}
	if !sawInvoice || !sawLogo {
		t.Errorf("attachment seen %v, inline image seen %v", sawInvoice, sawLogo)
	}
	// RFC 2231, not RFC 2047, for a non-ASCII parameter.
	if !bytes.Contains(raw, []byte("filename*=utf-8''Rechnung%20f%C3%BCr")) {
		t.Errorf("non-ASCII filename is not RFC 2231 encoded")
	}
}

func TestAttachmentContentTypeFallsBack(t *testing.T) {
	m := testMessage()
	m.Attachments = []mailroom.Attachment{
		{Filename: "notes.txt", Content: []byte("plain notes")},
		{Filename: "blob", Content: []byte{0, 1, 2}},
		{Filename: "bad.bin", ContentType: "not a type", Content: []byte{3}},
	}
	leaves := parse(t, mustCompose(t, m)).leaves()
	var got []string
	for _, l := range leaves[2:] {
		got = append(got, l.mediaType())
	}
	if want := "text/plain application/octet-stream application/octet-stream"; strings.Join(got, " ") != want {
		t.Errorf("attachment types = %v, want %s", got, want)
	}
	if string(leaves[2].body) != "plain notes" {
		t.Errorf("text attachment = %q", leaves[2].body)
	}
}

// The wire format: CRLF line endings only, and RFC 5322 §2.1.1's limit of
// 998 octets a line, whatever the client sent.
func TestWireFormatLimits(t *testing.T) {
	m := testMessage()
	m.Subject = strings.Repeat("Überweisung bestätigt ", 45)[:990]
	m.To[0].Name = strings.Repeat("Ünïcödé ", 60)
	m.Text = "line one\nline two with a bare LF\rthen a bare CR\r\n" + strings.Repeat("x", 5000) + "\n"
	m.HTML = "<html><body>" + strings.Repeat(`<td style="padding:0">Grüße</td>`, 3000) + "</body></html>"
	m.Headers = []mailroom.Header{{Name: "X-Long", Value: strings.Repeat("word ", 300)}}
	m.Attachments = []mailroom.Attachment{
		{Filename: strings.Repeat("ü", 126) + ".b", Content: randomBytes(5000)}, // 254 bytes, nearly all percent-encoded
		logo,
	}
	m.Category = mailroom.CategoryMarketing
	raw := mustComposeCopy(t, m, "jürgen.müller+"+strings.Repeat("x", 40)+"@example.net")

	for i, line := range bytes.Split(raw, []byte("\r\n")) {
		if bytes.ContainsAny(line, "\r\n") {
			t.Fatalf("line %d has a bare CR or LF: %q", i+1, line)
		}
		if len(line) > 998 {
			t.Fatalf("line %d is %d octets: %.80q…", i+1, len(line), line)
		}
	}
	if !bytes.HasSuffix(raw, []byte("\r\n")) {
		t.Error("message does not end with CRLF")
	}
	// Nothing was lost in the folding and encoding.
	r, err := mail.CreateReader(bytes.NewReader(raw))
	if err != nil {
		t.Fatal(err)
	}
	if s, _ := r.Header.Subject(); s != m.Subject {
		t.Errorf("long subject came back as %q", s)
	}
	if to, err := r.Header.AddressList("To"); err != nil || to[0].Name != m.To[0].Name {
		t.Errorf("long display name came back as %v, %v", to, err)
	}
	root := parse(t, raw)
	if html := root.find("text/html"); string(html.body) != m.HTML {
		t.Error("long HTML line did not survive")
	}
	wantText := "line one\r\nline two with a bare LF\r\nthen a bare CR\r\n" + strings.Repeat("x", 5000) + "\r\n"
	if text := root.find("text/plain"); string(text.body) != wantText {
		t.Errorf("text came back as %.100q", text.body)
	}
	verifyOne(t, raw)
}
