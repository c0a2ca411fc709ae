package http

import (
	"mime"
	"net/http"
	"strings"
	"testing"
)

// An attachment's Content-Disposition names its file as browsers read it
// (RFC 6266: filename* in UTF-8 first, the ASCII filename for the rest),
// and nothing a sender put in the name escapes it.
func TestAttachmentDisposition(t *testing.T) {
	for _, c := range []struct {
		name, want, ascii string
	}{
		{"invoice.pdf", "invoice.pdf", "invoice.pdf"},
		{"Résumé 2026.pdf", "Résumé 2026.pdf", "R_sum_ 2026.pdf"},
		{"../../etc/passwd", ".._.._etc_passwd", ".._.._etc_passwd"},
		{"a\"b;c=d\r\nX-Evil: 1.txt", "a\"b;c=dX-Evil: 1.txt", "a_b;c=dX-Evil: 1.txt"},
		{"100%.txt", "100%.txt", "100_.txt"},
		{"evil\u202egpj.exe", "evilgpj.exe", "evilgpj.exe"},
		{"", "attachment", "attachment"},
		{"\xff.bin", "\uFFFD.bin", "_.bin"},
	} {
		v := attachmentDisposition(c.name)
		if strings.ContainsAny(v, "\r\n") {
			t.Fatalf("%q: a line break in %q", c.name, v)
		}
		disp, params, err := mime.ParseMediaType(v)
		if err != nil || disp != "attachment" {
			t.Fatalf("%q: %q does not parse as an attachment: %v", c.name, v, err)
		}
		// mime, as browsers do, takes filename* over filename.
		if params["filename"] != c.want {
			t.Errorf("%q: filename* reads %q, want %q (%s)", c.name, params["filename"], c.want, v)
		}
		if !strings.Contains(v, `filename="`+c.ascii+`"`) {
			t.Errorf("%q: %s, want the ASCII filename %q", c.name, v, c.ascii)
		}
	}
}

// The sender's content type reaches the answer re-formed from its media
// type and charset; one that does not parse is application/octet-stream.
func TestDownloadHeaders(t *testing.T) {
	h := http.Header{}
	setDownloadHeaders(h, `text/html; charset="utf-8"; name="x.html"`, "x.html")
	for name, want := range map[string]string{
		"Content-Type":            "text/html; charset=utf-8",
		"X-Content-Type-Options":  "nosniff",
		"Content-Security-Policy": downloadCSP,
	} {
		if got := h.Get(name); got != want {
			t.Errorf("%s: %q, want %q", name, got, want)
		}
	}
	if !strings.HasPrefix(h.Get("Content-Disposition"), "attachment;") {
		t.Errorf("Content-Disposition %q", h.Get("Content-Disposition"))
	}
	for _, ct := range []string{"", "garbage", "text/plain;\r\nX: y", "image/png; a=\"unterminated"} {
		if got := downloadContentType(ct); got != "application/octet-stream" {
			t.Errorf("content type %q became %q", ct, got)
		}
	}
}
