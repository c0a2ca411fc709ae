package mailroom_test

import (
	"encoding/base64"
	"errors"
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
		{"filename bidi override", map[string]string{"filename": "invoice\u202efdp.exe", "content": ok}, "bidirectional control U+202E"},
		{"contentType latin-1", map[string]string{"filename": "a.csv", "content": ok, "contentType": "text/csv; charset=windows-1252"}, `charset "windows-1252" is not supported`},
		{"contentType utf8 spelt wrong", map[string]string{"filename": "a.txt", "content": ok, "contentType": "text/plain; charset=utf8"}, "is not supported"},
		{"contentType encoded CRLF", map[string]string{"filename": "a.txt", "content": ok, "contentType": "text/plain; name*=utf-8''%0D%0AX-Injected%3A%20yes"}, `parameter "name" must not contain line breaks`},
		{"contentType encoded bidi", map[string]string{"filename": "a.txt", "content": ok, "contentType": "text/plain; name*=utf-8''a%E2%80%AEb"}, "bidirectional control"},
		{"contentType encoded invalid UTF-8", map[string]string{"filename": "a.txt", "content": ok, "contentType": "text/plain; name*=utf-8''%FF%FE"}, "not valid UTF-8"},
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

// The JSON decoder refuses the 101st attachment before decoding it, so a
// body of 200,000 tiny attachments costs 101 of them, not 200,000.
func TestSendAttachmentsDecodeStopsAtLimit(t *testing.T) {
	body := func(n int, item string) []byte {
		var b strings.Builder
		b.WriteString(`{"attachments": [`)
		for i := range n {
			if i > 0 {
				b.WriteByte(',')
			}
			b.WriteString(item)
		}
		b.WriteString(`]}`)
		return []byte(b.String())
	}
	for _, tc := range []struct {
		name string
		raw  []byte
	}{
		{"200,000 tiny", body(200_000, `{"filename": "a", "content": "QQ=="}`)},
		{"300,000 bad", body(300_000, `{"filename": "", "content": "!"}`)},
		{"101", body(101, `{"filename": "a", "content": "QQ=="}`)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var r mailroom.SendRequest
			err := strictUnmarshal(tc.raw, &r)
			var e *mailroom.Error
			if !errors.As(err, &e) || e.Code != mailroom.ECodeValidation || len(e.Details) != 1 ||
				e.Details[0].Field != "attachments" || !strings.Contains(e.Details[0].Message, "at most 100") {
				t.Fatalf("got %v, want one validation detail on attachments naming the limit", err)
			}
			if len(r.Attachments) != 0 {
				t.Fatalf("the decoder kept %d attachments", len(r.Attachments))
			}
		})
	}
	hundred := make([]map[string]string, 100)
	for i := range hundred {
		hundred[i] = map[string]string{"filename": "a", "content": "QQ=="}
	}
	r := sendRequest(t, map[string]any{"attachments": hundred})
	if _, details := validateSend(t, r, ""); details != nil {
		t.Fatalf("100 attachments refused:%s", formatDetails(details))
	}
	// Built in Go, past the decoder: Validate holds the limit as well.
	r.Attachments = append(r.Attachments, r.Attachments[0])
	checkRefused(t, r, "", refusal{"attachments", -1, "has 101 attachments; at most 100"})
}

// BenchmarkDecodeManyAttachments reads the body of the attack, 200,000
// tiny attachments (6.6 MB), as the HTTP layer does before any validation.
// The decoder stops at the 101st, so the bytes allocated per operation stay
// near the size of 101 attachments, not of the body.
func BenchmarkDecodeManyAttachments(b *testing.B) {
	var sb strings.Builder
	sb.WriteString(`{"from": "a@acme.example", "to": "b@example.com", "subject": "s", "text": "t", "attachments": [`)
	for i := range 200_000 {
		if i > 0 {
			sb.WriteByte(',')
		}
		sb.WriteString(`{"filename":"a","content":"QQ=="}`)
	}
	sb.WriteString(`]}`)
	raw := []byte(sb.String())
	b.SetBytes(int64(len(raw)))
	b.ReportAllocs()
	for b.Loop() {
		var r mailroom.SendRequest
		if err := strictUnmarshal(raw, &r); err == nil {
			b.Fatal("200,000 attachments decoded")
		}
	}
}
