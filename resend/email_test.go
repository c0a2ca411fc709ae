package resend

import (
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/mailroom/mailroom"
)

// The Go SDK's shape: from, to and subject always sent, "" or null when
// unset; reply_to a string; tags a list; content a byte array.
func TestSendRequestTranslates(t *testing.T) {
	body := `{"from": "Shop <a@shop.example>", "to": "x@example.com", "cc": ["c@example.com"], "bcc": null,
		"reply_to": "r@example.com", "subject": "Hi", "html": "<p>Hi</p>", "text": "",
		"headers": {"X-Order": "42"}, "tags": [{"name": "kind", "value": "receipt"}],
		"scheduled_at": "in 10 min", "topic_id": "ignored",
		"attachments": [{"filename": "a.bin", "content": [1, 2, 3], "inline_content_id": "logo"}],
		"template": null}`
	e, err := decodeEmail(t, body)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	r, err := e.SendRequest(context.Background(), Translation{Now: now}, []byte(body))
	if err != nil {
		t.Fatal(err)
	}
	if r.From != "Shop <a@shop.example>" || len(r.To) != 1 || r.To[0] != "x@example.com" || r.Bcc != nil || r.ReplyTo[0] != "r@example.com" ||
		r.Headers["X-Order"] != "42" || r.Tags["kind"] != "receipt" || *r.ScheduledAt != "2026-01-02T03:14:05Z" || r.Template != nil {
		t.Errorf("translated %+v", r)
	}
	a := r.Attachments[0]
	if a.Content != base64.StdEncoding.EncodeToString([]byte{1, 2, 3}) || a.ContentID != "logo" || a.Filename != "a.bin" {
		t.Errorf("attachment %+v", a)
	}
	// The digest is the text's: the same text is the same request at
	// another moment, another text is another.
	later, _ := e.SendRequest(context.Background(), Translation{Now: now.Add(time.Minute)}, []byte(body))
	if !bytes.Equal(r.Digest(), later.Digest()) {
		t.Error("a retry of the same text a minute later digests differently")
	}
	other, _ := e.SendRequest(context.Background(), Translation{Now: now}, []byte(body+" "))
	if bytes.Equal(r.Digest(), other.Digest()) {
		t.Error("another text digests alike")
	}
}

func TestSendRequestAbsentAndTemplate(t *testing.T) {
	e, err := decodeEmail(t, `{"from": "", "to": "", "subject": null, "cc": "", "template": {"id": "receipt", "variables": {"n": 12345678901234567890}}}`)
	if err != nil {
		t.Fatal(err)
	}
	r, err := e.SendRequest(context.Background(), Translation{Now: time.Now()}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if r.From != "" || r.To != nil || r.Cc != nil || r.Subject != "" || *r.Template != "receipt" || string(r.Variables) != `{"n": 12345678901234567890}` {
		t.Errorf("translated %+v", r)
	}
}

func TestSendRequestProblems(t *testing.T) {
	for body, want := range map[string]string{
		`{"scheduled_at": "next week"}`:                                                          `scheduledAt: "next week" is not a time`,
		`{"tags": [{"name": "a", "value": "1"}, {"name": "a", "value": "2"}]}`:                   "is already the name of tags[0]",
		`{"attachments": [{"filename": "a", "content": "QQ==", "path": "https://x.example/a"}]}`: "has both content and path",
		`{"attachments": [{"filename": "a", "content_id": "x", "inline_content_id": "y"}]}`:      "differ; give one of them",
		`{"attachments": [{"path": "https://x.example/a"}]}`:                                     "this server fetches no attachments",
	} {
		e, err := decodeEmail(t, body)
		if err != nil {
			t.Fatal(err)
		}
		_, err = e.SendRequest(context.Background(), Translation{Now: time.Now()}, nil)
		var me *mailroom.Error
		if !errors.As(err, &me) || me.Code != mailroom.ECodeValidation || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want %q", body, err, want)
		}
	}
}
