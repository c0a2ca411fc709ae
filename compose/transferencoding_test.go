package compose

import (
	"bytes"
	"strings"
	"testing"

	"github.com/emersion/go-message"

	"github.com/mailroom/mailroom"
)

// forwarded is a message as a client attaches it, with Unix line endings.
const forwarded = "From: Ann <ann@example.org>\nSubject: The original\n\nFirst line\n.\nLast line\n"

func TestMessageAttachmentsAreNotBase64(t *testing.T) {
	utf8Message := "Subject: =?utf-8?q?Gr=C3=BC=C3=9Fe?=\r\nContent-Type: text/plain; charset=utf-8\r\n" +
		"Content-Transfer-Encoding: 8bit\r\n\r\nGrüße aus Köln\r\n"
	longLine := "Subject: long\r\n\r\n" + strings.Repeat("x", 999) + "\r\n"
	for _, c := range []struct {
		name, contentType, content  string
		wantType, wantCTE, wantBody string
	}{
		{"rfc822, ASCII, LF line ends", "message/rfc822", forwarded,
			"message/rfc822", "7bit", strings.ReplaceAll(forwarded, "\n", "\r\n")},
		{"rfc822, UTF-8 body: 7bit only, so a file", "message/rfc822", utf8Message,
			"application/octet-stream", "base64", utf8Message},
		{"rfc822, bare CR", "message/rfc822", "Subject: a\rX-B: c\r\n\r\nd",
			"message/rfc822", "7bit", "Subject: a\r\nX-B: c\r\n\r\nd"},
		{"rfc822, 998-octet line", "message/rfc822", "Subject: l\r\n\r\n" + strings.Repeat("y", 998),
			"message/rfc822", "7bit", "Subject: l\r\n\r\n" + strings.Repeat("y", 998)},
		{"rfc822, line over 998 octets", "message/rfc822", longLine,
			"application/octet-stream", "base64", longLine},
		{"rfc822, NUL", "message/rfc822", "Subject: n\r\n\r\na\x00b",
			"application/octet-stream", "base64", "Subject: n\r\n\r\na\x00b"},
		{"delivery-status", "message/delivery-status", "Reporting-MTA: dns; mx.example.org\n",
			"message/delivery-status", "7bit", "Reporting-MTA: dns; mx.example.org\r\n"},
		{"partial, ASCII", `message/partial; id="p1@example.org"; number=1; total=2`, forwarded,
			"message/partial", "7bit", strings.ReplaceAll(forwarded, "\n", "\r\n")},
		{"partial, 8-bit: 7bit only", `message/partial; id="p1@example.org"; number=1; total=2`, utf8Message,
			"application/octet-stream", "base64", utf8Message},
		{"external-body, 8-bit: 7bit only", "message/external-body; access-type=x-custom", utf8Message,
			"application/octet-stream", "base64", utf8Message},
		{"global may be base64", "message/global", utf8Message,
			"message/global", "base64", utf8Message},
		{"multipart is never an opaque attachment", "multipart/mixed; boundary=b", "--b\r\n\r\nx\r\n--b--\r\n",
			"application/octet-stream", "base64", "--b\r\n\r\nx\r\n--b--\r\n"},
		{"pdf stays base64", "application/pdf", "%PDF-1.7\n",
			"application/pdf", "base64", "%PDF-1.7\n"},
	} {
		t.Run(c.name, func(t *testing.T) {
			m := testMessage()
			m.Attachments = []mailroom.Attachment{{Filename: "attached", ContentType: c.contentType, Content: []byte(c.content)}}
			raw := mustCompose(t, m)
			assertWireLimits(t, raw)
			verifyOne(t, raw)

			root := parse(t, raw)
			if got, want := root.shape(), "multipart/mixed[multipart/alternative[text/plain text/html] "+c.wantType+"]"; got != want {
				t.Fatalf("structure\n got %s\nwant %s", got, want)
			}
			att := root.leaves()[2]
			if cte := att.header.Get("Content-Transfer-Encoding"); cte != c.wantCTE {
				t.Errorf("Content-Transfer-Encoding = %q, want %q", cte, c.wantCTE)
			}
			if string(att.body) != c.wantBody {
				t.Errorf("body came back as %.120q, want %.120q", att.body, c.wantBody)
			}
			if d, params := att.disposition(); d != "attachment" || params["filename"] != "attached" {
				t.Errorf("disposition %q %v", d, params)
			}
		})
	}
}

// A reader opens a forwarded message as a message: its header is there to
// read, not a blob to save.
func TestForwardedMessageOpensAsAMessage(t *testing.T) {
	m := testMessage()
	m.Attachments = []mailroom.Attachment{{Filename: "original.eml", ContentType: "message/rfc822", Content: []byte(forwarded)}}
	att := parse(t, mustCompose(t, m)).leaves()[2]
	inner, err := message.Read(bytes.NewReader(att.body))
	if err != nil {
		t.Fatal(err)
	}
	if s := inner.Header.Get("Subject"); s != "The original" {
		t.Errorf("forwarded Subject = %q", s)
	}
}
