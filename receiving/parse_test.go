package receiving

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/mailroom/mailroom"
)

var pdfBytes = append([]byte("%PDF-1.4\n"), bytes.Repeat([]byte{0, 1, 2, 0xff, '\r', '\n'}, 300)...)

func mixedMessage() []byte {
	b64 := base64.StdEncoding.EncodeToString(pdfBytes)
	var wrapped strings.Builder
	for len(b64) > 76 {
		wrapped.WriteString(b64[:76] + "\r\n")
		b64 = b64[76:]
	}
	wrapped.WriteString(b64 + "\r\n")
	return []byte("From: =?UTF-8?Q?Ren=C3=A9e?= <renee@sender.example>\r\n" +
		"To: support+ticket-42@inbox.example, other@inbox.example\r\n" +
		"Cc: Boss <boss@sender.example>\r\n" +
		"Subject: =?UTF-8?B?UmU6IGNhZsOp?=\r\n" +
		"Message-ID: <abc@sender.example>\r\n" +
		"MIME-Version: 1.0\r\n" +
		"Content-Type: multipart/mixed; boundary=outer\r\n" +
		"\r\n" +
		"--outer\r\n" +
		"Content-Type: multipart/alternative; boundary=inner\r\n" +
		"\r\n" +
		"--inner\r\n" +
		"Content-Type: text/plain; charset=iso-8859-1\r\n" +
		"Content-Transfer-Encoding: quoted-printable\r\n" +
		"\r\n" +
		"Caf=E9 at noon.\r\n" +
		"--inner\r\n" +
		"Content-Type: text/html; charset=utf-8\r\n" +
		"\r\n" +
		"<p>Café at noon.</p>\r\n" +
		"--inner--\r\n" +
		"--outer\r\n" +
		"Content-Type: application/pdf\r\n" +
		"Content-Disposition: attachment; filename*=UTF-8''r%C3%A9sum%C3%A9.pdf\r\n" +
		"Content-Transfer-Encoding: base64\r\n" +
		"\r\n" +
		wrapped.String() +
		"--outer\r\n" +
		"Content-Type: text/html; name=page.html\r\n" +
		"Content-Disposition: attachment; filename=page.html\r\n" +
		"\r\n" +
		"<script>alert(1)</script>\r\n" +
		"--outer\r\n" +
		"Content-Type: image/png\r\n" +
		"Content-ID: <logo@sender.example>\r\n" +
		"Content-Disposition: inline\r\n" +
		"Content-Transfer-Encoding: base64\r\n" +
		"\r\n" +
		"iVBORw0KGgo=\r\n" +
		"--outer--\r\n")
}

func TestParseReadsHeaderTextHTMLAndAttachments(t *testing.T) {
	p := Parse(mixedMessage(), time.Now())
	if p.Problem != "" {
		t.Errorf("Problem = %q for a well-formed message", p.Problem)
	}
	if p.From != "renee@sender.example" || p.Subject != "Re: café" || p.MessageID != "abc@sender.example" {
		t.Errorf("from %q subject %q message-id %q", p.From, p.Subject, p.MessageID)
	}
	if fmt.Sprint(p.To) != "[support+ticket-42@inbox.example other@inbox.example]" || fmt.Sprint(p.Cc) != "[boss@sender.example]" {
		t.Errorf("to %v cc %v", p.To, p.Cc)
	}
	if strings.TrimSpace(p.Text) != "Café at noon." || strings.TrimSpace(p.HTML) != "<p>Café at noon.</p>" {
		t.Errorf("text %q html %q", p.Text, p.HTML)
	}
	if len(p.Headers) != 7 || p.Headers[0] != (mailroom.ReceivedHeader{Name: "From", Value: "Renée <renee@sender.example>"}) {
		t.Errorf("headers %v", p.Headers)
	}
	if len(p.Attachments) != 3 {
		t.Fatalf("%d attachments, want 3: %+v", len(p.Attachments), p.Attachments)
	}
	pdf, html, png := p.Attachments[0], p.Attachments[1], p.Attachments[2]
	if pdf.Filename != "résumé.pdf" || pdf.ContentType != "application/pdf" || !bytes.Equal(pdf.Content, pdfBytes) || pdf.Size != int64(len(pdfBytes)) {
		t.Errorf("pdf attachment %q %q size %d, bytes equal %v", pdf.Filename, pdf.ContentType, pdf.Size, bytes.Equal(pdf.Content, pdfBytes))
	}
	if html.Filename != "page.html" || !strings.HasPrefix(html.ContentType, "text/html") {
		t.Errorf("an HTML attachment is %q %q, want an attachment, not the body", html.Filename, html.ContentType)
	}
	if png.ContentID != "logo@sender.example" || png.Size != 8 {
		t.Errorf("inline image %+v", png)
	}
	ids := map[string]bool{}
	for _, a := range p.Attachments {
		if !mailroom.IsID(a.ID, mailroom.PrefixReceivedAttachment) || ids[a.ID] {
			t.Errorf("attachment id %q is not a fresh att_ id", a.ID)
		}
		ids[a.ID] = true
	}
}

// Hostile input is read within bounds and said to be malformed, never a
// panic or an endless loop.
func TestParseHostileInput(t *testing.T) {
	manyFields := strings.Repeat("X-A: b\r\n", 5000) + "Subject: late\r\n\r\nbody\r\n"
	var deep strings.Builder
	for i := 0; i < 200; i++ {
		fmt.Fprintf(&deep, "Content-Type: multipart/mixed; boundary=b%d\r\n\r\n--b%d\r\n", i, i)
	}
	deep.WriteString("Content-Type: text/plain\r\n\r\nbottom\r\n")
	var many strings.Builder
	many.WriteString("Content-Type: multipart/mixed; boundary=x\r\n\r\n")
	for i := 0; i < 2000; i++ {
		many.WriteString("--x\r\nContent-Type: application/octet-stream\r\n\r\nz\r\n")
	}
	many.WriteString("--x--\r\n")
	cases := map[string]struct {
		raw     string
		problem string
	}{
		"many header fields": {manyFields, "header fields"},
		"deep nesting":       {deep.String(), "nested"},
		"many parts":         {many.String(), "MIME parts"},
		"no boundary":        {"Content-Type: multipart/mixed\r\n\r\n--x\r\n\r\nhi\r\n", "multipart"},
		"cut-off multipart":  {"Content-Type: multipart/mixed; boundary=x\r\n\r\n--x\r\nContent-Type: text/plain\r\n\r\nhi", ""},
		"bad base64":         {"Content-Type: application/pdf\r\nContent-Transfer-Encoding: base64\r\n\r\n!!!not base64***\r\n", "part"},
		"unknown charset":    {"Content-Type: text/plain; charset=x-klingon\r\n\r\nqapla\r\n", ""},
		"not a header":       {"this is not mail\r\n", ""},
		"empty":              {"", ""},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			p := Parse([]byte(c.raw), time.Now())
			if c.problem != "" && !strings.Contains(p.Problem, c.problem) {
				t.Errorf("Problem = %q, want it to mention %q", p.Problem, c.problem)
			}
			if len(p.Headers) > maxHeaders || len(p.Attachments) > maxParts {
				t.Errorf("%d headers, %d attachments kept: beyond the bounds", len(p.Headers), len(p.Attachments))
			}
		})
	}
}

// FuzzParse: whatever arrives, Parse returns, within its bounds.
func FuzzParse(f *testing.F) {
	f.Add(mixedMessage())
	f.Add(testMessage("a@b.example"))
	f.Add([]byte("Content-Type: multipart/mixed; boundary=x\r\n\r\n--x\r\nContent-Type: message/rfc822\r\n\r\nFrom: a\r\n\r\n--x--\r\n"))
	f.Fuzz(func(t *testing.T, raw []byte) {
		p := Parse(raw, time.Unix(0, 0))
		var decoded int
		for _, a := range p.Attachments {
			decoded += len(a.Content)
		}
		decoded += len(p.Text) + len(p.HTML)
		if decoded > 2*len(raw)+4096 {
			t.Fatalf("%d decoded bytes of a %d-byte message", decoded, len(raw))
		}
		_ = withoutOwnAuthResults(raw, authservID)
		_, _ = fromDomain(raw)
	})
}

// The decoded bytes of all parts together stay within the walk's budget
// whatever a part decodes to: what is beyond it is cut and said.
func TestWalkerBudgetCutsDecodedBytes(t *testing.T) {
	w := walker{budget: 10}
	got, err := w.read(strings.NewReader(strings.Repeat("x", 25)))
	if len(got) != 10 || err == nil {
		t.Errorf("read %d bytes, %v; want 10 and an error", len(got), err)
	}
	if got, _ := w.read(strings.NewReader("more")); len(got) != 0 {
		t.Errorf("after the budget ran out, read %d bytes", len(got))
	}
}

// A header too large to read whole still gives its From, To, Subject and
// text from the fields that could be read: the message is never shown
// without the From that its DMARC verdict is about.
func TestParseManyHeaderFieldsKeepsFromAndText(t *testing.T) {
	raw := "From: Ann <ann@sender.example>\r\nTo: x@in.example\r\nSubject: many fields\r\n" +
		"Content-Type: text/plain; charset=utf-8\r\n" + strings.Repeat("X-Hn: 0123456789012345678901234567890123456789\r\n", 10000) +
		"\r\nthe body\r\n"
	p := Parse([]byte(raw), time.Now())
	if p.From != "ann@sender.example" || len(p.To) != 1 || p.To[0] != "x@in.example" || p.Subject != "many fields" ||
		!strings.Contains(p.Text, "the body") {
		t.Errorf("from %q, to %q, subject %q, text %q", p.From, p.To, p.Subject, p.Text)
	}
	if !strings.Contains(p.Problem, "header") {
		t.Errorf("Problem = %q, want it to say the header was too large", p.Problem)
	}
}
