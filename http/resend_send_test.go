package http_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"strings"
	"testing"

	"github.com/mailroom/mailroom"
	"github.com/mailroom/mailroom/apitest"
	"github.com/mailroom/mailroom/delivery"
	mhttp "github.com/mailroom/mailroom/http"
	"github.com/mailroom/mailroom/storetest"
)

// resendPost POSTs to one of Resend's routes with the admin key; the
// answer is checked against the OpenAPI document, as every answer is.
func (e *env) resendPost(t *testing.T, path string, body any, header map[string]string) *apitest.Response {
	t.Helper()
	return e.Do(apitest.Request{Method: "POST", Path: path, Key: e.admin, Body: body, Header: header})
}

// resendID is the id of a 200 {"id"} answer, which holds nothing else.
func resendID(t *testing.T, r *apitest.Response) string {
	t.Helper()
	var got map[string]any
	if err := json.Unmarshal(r.Body, &got); r.Status != 200 || err != nil || len(got) != 1 {
		t.Fatalf("send: %d %s", r.Status, r.Body)
	}
	id, _ := got["id"].(string)
	if !strings.HasPrefix(id, mailroom.PrefixMessage) {
		t.Fatalf("id %q", id)
	}
	return id
}

// newResendEnv is newEnv with delivery held (holdDelivery), so that the
// test reads accepted mail as it was stored, unsigned and unsent.
func newResendEnv(t *testing.T, eng storetest.Engine, opts ...envOption) *env {
	// The server's clock is the test's, which "in 5 minutes" counts from.
	sameClock := func(s *mhttp.Server, d *delivery.Deliverer) { s.Now = d.Now }
	return newEnvWithStore(t, eng.Open(t), append([]envOption{holdDelivery, sameClock}, opts...)...)
}

// stored is the message as the store holds it, attachments included;
// delivery must be held (newResendEnv), for a signed message is held as
// its bytes.
func (e *env) stored(t *testing.T, id string) *mailroom.Message {
	t.Helper()
	m, _, err := e.store.MessageForDelivery(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// messageCount is how many messages the account's log holds.
func (e *env) messageCount(t *testing.T) int {
	t.Helper()
	r := e.Do(apitest.Request{Method: "GET", Path: "/v1/messages?limit=100", Key: e.admin})
	page, _ := r.Map()["data"].([]any)
	return len(page)
}

// Every form Resend's SDKs send, and the mail as stored is what was sent.
func TestResendSendForms(t *testing.T) {
	storetest.Each(t, func(t *testing.T, eng storetest.Engine) {
		e := newResendEnv(t, eng)
		e.verifiedDomain(t, "shop.example")
		pdf := []byte("%PDF-1.4 \x00\xff\x80 binary")
		logo := []byte{0x89, 'P', 'N', 'G', 0, 1, 2, 255}
		note := []byte("a note")
		bytesOf := func(b []byte) []int {
			out := make([]int, len(b))
			for i, c := range b {
				out[i] = int(c)
			}
			return out
		}
		id := resendID(t, e.resendPost(t, "//emails", map[string]any{
			"from": "Shop <orders@shop.example>", "to": "ann@example.net", "cc": []string{"carol@example.org"}, "bcc": nil,
			"reply_to": "help@shop.example", "subject": "Your receipt", "html": "<p>Thanks</p>", "text": "Thanks",
			"headers": map[string]string{"X-Order": "42"}, "tags": []map[string]string{{"name": "kind", "value": "receipt"}, {"name": "shop", "value": "eu"}},
			"topic_id": "ignored", "scheduled_at": "",
			"attachments": []map[string]any{
				{"filename": "receipt.pdf", "content": base64.StdEncoding.EncodeToString(pdf)},                                                                 // Node ≥ 6.37
				{"filename": "logo.png", "content": bytesOf(logo), "inline_content_id": "logo"},                                                                // Go SDK
				{"filename": "note.txt", "content": map[string]any{"type": "Buffer", "data": bytesOf(note)}, "content_type": "text/plain", "content_id": "n1"}, // Node's Buffer
			},
		}, nil))
		m := e.stored(t, id)
		if m.From.Address != "orders@shop.example" || len(m.To) != 1 || m.To[0].Address != "ann@example.net" || m.Cc[0].Address != "carol@example.org" ||
			len(m.Bcc) != 0 || m.ReplyTo[0].Address != "help@shop.example" || m.Subject != "Your receipt" || m.HTML != "<p>Thanks</p>" || m.Text != "Thanks" {
			t.Errorf("stored %+v", m)
		}
		if len(m.Headers) != 1 || m.Headers[0].Name != "X-Order" || m.Headers[0].Value != "42" {
			t.Errorf("headers %+v", m.Headers)
		}
		if len(m.Tags) != 2 || m.Tags["kind"] != "receipt" || m.Tags["shop"] != "eu" {
			t.Errorf("tags %v", m.Tags)
		}
		want := []mailroom.Attachment{
			{Filename: "receipt.pdf", Content: pdf, ContentType: "application/pdf"},
			{Filename: "logo.png", Content: logo, ContentType: "image/png", ContentID: "logo"},
			{Filename: "note.txt", Content: note, ContentType: "text/plain", ContentID: "n1"},
		}
		if len(m.Attachments) != len(want) {
			t.Fatalf("attachments %+v", m.Attachments)
		}
		for i, a := range m.Attachments {
			if a.Filename != want[i].Filename || string(a.Content) != string(want[i].Content) || a.ContentType != want[i].ContentType || a.ContentID != want[i].ContentID {
				t.Errorf("attachment %d: %+v, want %+v", i, a, want[i])
			}
		}

		// The Go SDK's unset fields are "" and null; the list of to is one.
		id = resendID(t, e.resendPost(t, "/emails", map[string]any{"from": "orders@shop.example", "to": []string{"a@example.net", "b@example.net"},
			"subject": "Hi", "text": "Hi", "cc": nil, "bcc": nil, "reply_to": "", "html": "", "headers": nil, "tags": nil, "attachments": nil, "template": nil}, nil))
		if m := e.stored(t, id); len(m.To) != 2 || m.Cc != nil || m.ReplyTo != nil || m.HTML != "" || m.Attachments != nil {
			t.Errorf("stored %+v", m)
		}
	})
}

// Each error as Resend names it, each message saying what was wrong, and
// nothing stored.
func TestResendSendErrors(t *testing.T) {
	storetest.Each(t, func(t *testing.T, eng storetest.Engine) {
		e := newResendEnv(t, eng)
		e.verifiedDomain(t, "shop.example")
		e.domainCall(t, "POST", "/v1/domains", e.admin, map[string]string{"name": "unverified.example"})
		ok := func(extra map[string]any) map[string]any {
			b := map[string]any{"from": "orders@shop.example", "to": "ann@example.net", "subject": "Hi", "text": "Hi"}
			for k, v := range extra {
				b[k] = v
			}
			return b
		}
		for _, c := range []struct {
			name   string
			body   any
			header map[string]string
			status int
			err    string
			want   []string
		}{
			{"from missing (Go SDK)", ok(map[string]any{"from": ""}), nil, 422, "missing_required_field", []string{"from"}},
			{"to missing", ok(map[string]any{"to": nil}), nil, 422, "missing_required_field", []string{"to"}},
			{"subject missing", ok(map[string]any{"subject": ""}), nil, 422, "missing_required_field", []string{"subject"}},
			{"bad address", ok(map[string]any{"to": "not an address"}), nil, 422, "validation_error", []string{"to"}},
			{"reply_to", ok(map[string]any{"reply_to": []string{"x"}}), nil, 422, "validation_error", []string{"reply_to[0]"}},
			{"bad base64", ok(map[string]any{"attachments": []map[string]any{{"filename": "a.txt", "content": "!!"}}}), nil, 422, "invalid_attachment", []string{"attachments[0]", "base64"}},
			{"byte 256", ok(map[string]any{"attachments": []map[string]any{{"filename": "a.txt", "content": []int{1, 256}}}}), nil, 422, "invalid_attachment", []string{"attachments[0]", "content[1]"}},
			{"content a number", ok(map[string]any{"attachments": []map[string]any{{"filename": "a.txt", "content": 5}}}), nil, 422, "invalid_attachment", []string{"attachments[0]"}},
			{"no filename", ok(map[string]any{"attachments": []map[string]any{{"content": "QQ=="}}}), nil, 422, "invalid_attachment", []string{"filename"}},
			{"unverified domain", ok(map[string]any{"from": "a@unverified.example"}), nil, 403, "validation_error", []string{"unverified.example"}},
			{"scheduled_at", ok(map[string]any{"scheduled_at": "tomorrow at noon"}), nil, 422, "validation_error", []string{"scheduled_at", "in N minutes", "ISO 8601"}},
			{"scheduled_at past", ok(map[string]any{"scheduled_at": "2020-01-01T00:00:00Z"}), nil, 422, "validation_error", []string{"scheduled_at", "past"}},
			{"tags twice", ok(map[string]any{"tags": []map[string]string{{"name": "a", "value": "1"}, {"name": "a", "value": "2"}}}), nil, 422, "validation_error", []string{"tags[1]"}},
			{"key too long", ok(nil), map[string]string{"Idempotency-Key": strings.Repeat("k", 257)}, 400, "invalid_idempotency_key", []string{"257 characters"}},
			{"not JSON", `{"from": `, nil, 400, "validation_error", []string{"JSON"}},
			{"not an object", `[]`, nil, 400, "validation_error", []string{"object"}},
			{"to a number", ok(map[string]any{"to": 5}), nil, 400, "validation_error", []string{"to"}},
			{"unknown template", ok(map[string]any{"text": "", "template": map[string]any{"id": "nope"}}), nil, 404, "not_found", nil},
		} {
			t.Run(c.name, func(t *testing.T) {
				wantResendError(t, e.resendPost(t, "/emails", c.body, c.header), c.status, c.err, c.want...)
			})
		}
		if n := e.messageCount(t); n != 0 {
			t.Errorf("refused sends left %d messages", n)
		}
	})
}
