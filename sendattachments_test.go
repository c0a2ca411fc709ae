package mailroom_test

import (
	"encoding/base64"
	"strings"
	"testing"

	"github.com/mailroom/mailroom"
)

func TestSendAttachmentsAccepted(t *testing.T) {
	data := []byte("hello, attachment")
	padded := base64.StdEncoding.EncodeToString(data)
	raw := base64.RawStdEncoding.EncodeToString(data)
	wrapped := padded[:8] + "\r\n" + padded[8:]
	r := sendRequest(t, map[string]any{"attachments": []map[string]string{
		{"filename": "padded.bin", "content": padded},
		{"filename": "raw.bin", "content": raw},
		{"filename": "wrapped.bin", "content": wrapped},
		{"filename": "report.pdf", "content": padded},
		{"filename": "noextension", "content": padded},
		{"filename": "logo.png", "content": padded, "contentId": "logo-1@acme.example"},
		{"filename": "data.csv", "content": padded, "contentType": "Text/CSV; Charset=\"utf-8\""},
		{"filename": "Größe – März.txt", "content": padded, "contentType": "text/plain"},
	}})
	m, details := validateSend(t, r, "")
	if details != nil {
		t.Fatalf("refused:%s", formatDetails(details))
	}
	wantTypes := []string{"application/octet-stream", "application/octet-stream", "application/octet-stream", "application/pdf",
		"application/octet-stream", "image/png", "text/csv; charset=utf-8", "text/plain"}
	if len(m.Attachments) != len(wantTypes) {
		t.Fatalf("%d attachments, want %d", len(m.Attachments), len(wantTypes))
	}
	for i, a := range m.Attachments {
		if string(a.Content) != string(data) {
			t.Errorf("attachments[%d] content %q", i, a.Content)
		}
		if a.ContentType != wantTypes[i] {
			t.Errorf("attachments[%d] (%s) type %q, want %q", i, a.Filename, a.ContentType, wantTypes[i])
		}
	}
	if m.Attachments[5].ContentID != "logo-1@acme.example" || m.Attachments[0].ContentID != "" {
		t.Errorf("content ids %q %q", m.Attachments[5].ContentID, m.Attachments[0].ContentID)
	}
}

func TestSendAttachmentsRefused(t *testing.T) {
	ok := base64.StdEncoding.EncodeToString([]byte("x"))
	for _, tc := range []struct {
		name string
		att  map[string]string
		want string
	}{
		{"filename missing", map[string]string{"content": ok}, "filename is required"},
		{"filename CRLF", map[string]string{"filename": "a.txt\r\nContent-Type: text/html", "content": ok}, "filename must not contain line breaks"},
		{"filename LF", map[string]string{"filename": "a\n.txt", "content": ok}, "filename must not contain line breaks"},
		{"filename slash", map[string]string{"filename": "../etc/passwd", "content": ok}, "filename must be a plain file name"},
		{"filename backslash", map[string]string{"filename": `C:\x.txt`, "content": ok}, "filename must be a plain file name"},
		{"filename dot-dot", map[string]string{"filename": "..", "content": ok}, "is not a file name"},
		{"filename too long", map[string]string{"filename": strings.Repeat("f", 256), "content": ok}, "filename has 256 octets"},
		{"content missing", map[string]string{"filename": "a.txt"}, "content is required"},
		{"content garbage", map[string]string{"filename": "a.txt", "content": "not base64!"}, "content is not valid base64"},
		{"content bad padding", map[string]string{"filename": "a.txt", "content": "QQ="}, "content is not valid base64"},
		{"content URL-safe", map[string]string{"filename": "a.txt", "content": "-_-_"}, "URL-safe"},
		{"content with spaces", map[string]string{"filename": "a.txt", "content": "QUJD RA=="}, "content is not valid base64"},
		{"contentType unparsable", map[string]string{"filename": "a.txt", "content": ok, "contentType": "text/plain; charset"}, "contentType"},
		{"contentType without subtype", map[string]string{"filename": "a.txt", "content": ok, "contentType": "text"}, "contentType"},
		{"contentType CRLF", map[string]string{"filename": "a.txt", "content": ok, "contentType": "text/plain\r\nX-Evil: 1"}, "contentType must not contain line breaks"},
		{"contentType multipart", map[string]string{"filename": "a.txt", "content": ok, "contentType": "multipart/mixed; boundary=x"}, "multipart"},
		{"contentId angle brackets", map[string]string{"filename": "a.png", "content": ok, "contentId": "<logo>"}, "contentId"},
		{"contentId space", map[string]string{"filename": "a.png", "content": ok, "contentId": "my logo"}, "contentId"},
		{"contentId too long", map[string]string{"filename": "a.png", "content": ok, "contentId": strings.Repeat("c", 101)}, "contentId has 101 characters"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := sendRequest(t, map[string]any{"attachments": []map[string]string{{"filename": "fine.txt", "content": ok}, tc.att}})
			checkRefused(t, r, "", refusal{"attachments", 1, tc.want})
		})
	}
}

func TestSendAttachmentsDuplicateContentID(t *testing.T) {
	ok := base64.StdEncoding.EncodeToString([]byte("x"))
	r := sendRequest(t, map[string]any{"attachments": []map[string]string{
		{"filename": "a.png", "content": ok, "contentId": "logo"},
		{"filename": "b.png", "content": ok, "contentId": "logo"},
	}})
	checkRefused(t, r, "", refusal{"attachments", 1, "already used by attachments[0]"})
}

func TestSendAttachmentsSizeLimit(t *testing.T) {
	half := base64.StdEncoding.EncodeToString(make([]byte, mailroom.MaxAttachmentBytes/2))
	exact := sendRequest(t, map[string]any{"attachments": []map[string]string{
		{"filename": "a.bin", "content": half}, {"filename": "b.bin", "content": half},
	}})
	if _, details := validateSend(t, exact, ""); details != nil {
		t.Fatalf("10 MiB refused:%s", formatDetails(details))
	}
	over := sendRequest(t, map[string]any{"attachments": []map[string]string{
		{"filename": "a.bin", "content": half}, {"filename": "b.bin", "content": half}, {"filename": "c.bin", "content": "QQ=="},
	}})
	checkRefused(t, over, "", refusal{"attachments", -1, "at most 10485760 (10 MiB)"})
}
