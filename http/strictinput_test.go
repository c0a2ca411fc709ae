package http_test

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/mailroom/mailroom"
	"github.com/mailroom/mailroom/apitest"
	"github.com/mailroom/mailroom/storetest"
)

// sendBase is a valid send from a verified domain, as JSON text without
// its closing brace, so that a test can add members the way an attacker
// writes them.
const sendBase = `{"from": "orders@shop.example", "subject": "Hi", "text": "Hello"`

// noMessages fails unless the account's log is empty.
func (e *env) noMessages(t *testing.T) {
	t.Helper()
	r := e.Do(apitest.Request{Method: "GET", Path: "/v1/messages", Key: e.admin})
	if page, _ := r.Map()["data"].([]any); len(page) != 0 {
		t.Fatalf("refused requests left %d messages in the log", len(page))
	}
}

// hasField tells whether a 400's details name field.
func hasField(r *apitest.Response, field string) bool {
	details, _ := r.Map()["details"].([]any)
	for _, d := range details {
		if m, _ := d.(map[string]any); m["field"] == field {
			return true
		}
	}
	return false
}

// One body is read one way (docs/api.md "Request bodies"): names match exactly, a
// repeated name and invalid UTF-8 are malformed JSON. encoding/json would
// have sent the first two to b@y and taken ſubject for subject.
func TestSendStrictJSON(t *testing.T) {
	e := newEnv(t, storetest.SQLite)
	e.verifiedDomain(t, "shop.example")
	for _, tc := range []struct {
		name  string
		body  string
		code  string
		field string // named in details, for validation_error
	}{
		{"TO is not to", sendBase + `, "to": "a@example.net", "TO": "b@example.net"}`, mailroom.ECodeValidation, "TO"},
		{"long s is not s", `{"from": "orders@shop.example", "to": "a@example.net", "ſubject": "Hi", "text": "Hello"}`, mailroom.ECodeValidation, "ſubject"},
		{"Kelvin sign is not K", sendBase + ", \"to\": \"a@example.net\", \"idempotency\u212Aey\": \"k\"}", mailroom.ECodeValidation, "idempotency\u212Aey"},
		{"repeated name", `{"from": "orders@shop.example", "to": "a@example.net", "subject": "a", "subject": "b", "text": "Hello"}`, mailroom.ECodeInvalidJSON, ""},
		{"repeated recipient field", sendBase + `, "to": "a@example.net", "to": "b@example.net"}`, mailroom.ECodeInvalidJSON, ""},
		{"repeated name in an attachment", sendBase + `, "to": "a@example.net", "attachments": [{"filename": "a", "filename": "b", "content": "QQ=="}]}`, mailroom.ECodeInvalidJSON, ""},
		{"repeated header", sendBase + `, "to": "a@example.net", "headers": {"X-A": "1", "X-A": "2"}}`, mailroom.ECodeInvalidJSON, ""},
		{"invalid UTF-8 in a value", sendBase + ", \"to\": \"a@example.net\", \"tags\": {\"k\": \"\xff\"}}", mailroom.ECodeInvalidJSON, ""},
		{"invalid UTF-8 in a name", sendBase + ", \"to\": \"a@example.net\", \"\xff\": 1}", mailroom.ECodeInvalidJSON, ""},
		{"unknown member in an attachment", sendBase + `, "to": "a@example.net", "attachments": [{"filename": "a", "content": "QQ==", "contnetType": "x"}]}`, mailroom.ECodeValidation, "attachments"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := e.Do(apitest.Request{Method: "POST", Path: "/v1/send", Key: e.admin, Body: tc.body})
			wantError(t, r, 400, tc.code)
			if tc.field != "" && !hasField(r, tc.field) {
				t.Fatalf("details should name %q: %s", tc.field, r.Body)
			}
		})
	}
	e.noMessages(t)

	t.Run("messages name the place", func(t *testing.T) {
		for body, want := range map[string]string{
			sendBase + `, "to": "a@example.net", "subject": "b"}`:                   `Field \"subject\" is given twice`,
			sendBase + `, "to": ["a@example.net", 7]}`:                              `Field \"to[1]\" must be a string, not a number`,
			sendBase + `, "to": 7}`:                                                 `Field \"to\" must be an address or an array of addresses, not a number`,
			sendBase + `, "to": "a@example.net", "attachments": [{"filename": 1}]}`: `Field \"attachments[0].filename\" must be a string, not a number`,
			sendBase + `, "to": "a@example.net", "headers": {"X-A": true}}`:         `Field \"headers.X-A\" must be a string, not a boolean`,
			sendBase + `, "to": "a@example.net", "headers": {"X-A": null}}`:         `Field \"headers.X-A\" must be a string, not null`,
			sendBase + `, "to": "a@example.net", "tags": {"k": null}}`:              `Field \"tags.k\" must be a string, not null`,
			sendBase + `, "to": ["a@example.net", null]}`:                           `Field \"to[1]\" must be a string, not null`,
			sendBase + `, "to": "a@example.net", "variables": [1]}`:                 `Field \"variables\" must be an object, not an array`,
			sendBase + ", \"to\": \"a@example.net\", \"html\": \"\xffx\"}":          `not valid UTF-8`,
			sendBase + `, "to": "a@example.net"} x`:                                 `data after its JSON value`,
			sendBase + `, "to": "a@example.net"} {}`:                                `more than one JSON value`,
			`[1]`:                                                                   `must be a JSON object, not an array`,
			sendBase:                                                                `ends before its JSON value does`,
		} {
			r := e.Do(apitest.Request{Method: "POST", Path: "/v1/send", Key: e.admin, Body: body})
			wantError(t, r, 400, mailroom.ECodeInvalidJSON)
			if !strings.Contains(string(r.Body), want) {
				t.Errorf("%s: %s, want it to say %s", body, r.Body, want)
			}
		}
	})

	t.Run("every body is read the same way", func(t *testing.T) {
		for body, code := range map[string]string{
			`{"name": "x", "NAME": "y", "scopes": ["send"]}`: mailroom.ECodeValidation,
			`{"name": "x", "name": "y", "scopes": ["send"]}`: mailroom.ECodeInvalidJSON,
			"{\"name\": \"\xff\", \"scopes\": [\"send\"]}":   mailroom.ECodeInvalidJSON,
		} {
			wantError(t, e.Do(apitest.Request{Method: "POST", Path: "/v1/api-keys", Key: e.admin, Body: body}), 400, code)
		}
		wantError(t, e.Do(apitest.Request{Method: "POST", Path: "/v1/domains", Key: e.admin, Body: `{"name": "a.example", "name": "b.example"}`}), 400, mailroom.ECodeInvalidJSON)
		wantError(t, e.Do(apitest.Request{Method: "POST", Path: "/v1/suppressions", Key: e.admin, Body: `{"Address": "a@example.net"}`}), 400, mailroom.ECodeValidation)
	})
}

// Requests are bounded (docs/api.md "Limits") and refused before the work grows with
// them: each answer is a 400 of a few kilobytes and nothing is stored.
// (encoding/json had stored a 32 MB message from the first and answered
// the second with a 29.6 MB body.)
func TestSendBoundedRequests(t *testing.T) {
	e := newEnv(t, storetest.SQLite)
	e.verifiedDomain(t, "shop.example")
	list := func(n int, item func(i int) string) string {
		var b strings.Builder
		for i := range n {
			if i > 0 {
				b.WriteByte(',')
			}
			b.WriteString(item(i))
		}
		return b.String()
	}
	for _, tc := range []struct {
		name  string
		body  string
		field string
	}{
		{"200,000 tiny attachments", sendBase + `, "to": "a@example.net", "attachments": [` +
			list(200_000, func(int) string { return `{"filename":"a","content":"QQ=="}` }) + `]}`, "attachments"},
		{"300,000 bad attachments", sendBase + `, "to": "a@example.net", "attachments": [` +
			list(300_000, func(int) string { return `{"filename":"","content":"!","contentType":"x"}` }) + `]}`, "attachments"},
		{"100,000 custom headers", sendBase + `, "to": "a@example.net", "headers": {` +
			list(100_000, func(i int) string { return fmt.Sprintf(`"X-H%d":"v"`, i) }) + `}}`, "headers"},
		{"17 KiB of custom headers", sendBase + `, "to": "a@example.net", "headers": {` +
			list(17, func(i int) string { return fmt.Sprintf(`"X-H%d":"%s"`, i, strings.Repeat("v", 1020)) }) + `}}`, "headers"},
		{"300,000 recipients", sendBase + `, "to": [` +
			list(300_000, func(i int) string { return `"a@example.net"` }) + `]}`, "to"},
		{"html over 5 MiB", sendBase + `, "to": "a@example.net", "html": "` + strings.Repeat("a", 5<<20+1) + `"}`, "html"},
		{"100 attachments, 400 problems", sendBase + `, "to": "a@example.net", "attachments": [` +
			list(100, func(int) string { return `{"filename":"a/b","content":"!","contentType":"x","contentId":"<x>"}` }) + `]}`, "attachments"},
		// Messages quote only an excerpt of what was sent: quoted whole, a
		// 15 MiB value came back twice, in a 31 MiB answer.
		{"a 15 MiB category", sendBase + `, "to": "a@example.net", "category": "` + strings.Repeat("A", 15<<20) + `"}`, "category"},
		{"999 addresses of 15 KiB", sendBase + `, "to": [` +
			list(999, func(i int) string { return `"` + strings.Repeat("b", 15<<10) + `"` }) + `]}`, "to"},
		{"an unknown field with a 15 MiB name", sendBase + `, "to": "a@example.net", "` + strings.Repeat("x", 15<<20) + `": 1}`, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := e.Do(apitest.Request{Method: "POST", Path: "/v1/send", Key: e.admin, Body: tc.body})
			wantError(t, r, 400, mailroom.ECodeValidation)
			if tc.field != "" && !hasField(r, tc.field) {
				t.Fatalf("details should name %s: %.2000s", tc.field, r.Body)
			}
			if len(r.Body) > 64<<10 {
				t.Fatalf("a %d-byte request got a %d-byte answer", len(tc.body), len(r.Body))
			}
			details, _ := r.Map()["details"].([]any)
			if len(details) > mailroom.MaxDetails {
				t.Fatalf("%d details, at most %d allowed", len(details), mailroom.MaxDetails)
			}
		})
	}
	e.noMessages(t)
}

// An Idempotency-Key header that is present but empty is refused like an
// empty idempotencyKey field; sent on two lines it must be one key.
func TestSendIdempotencyKeyHeaderEdges(t *testing.T) {
	e := newEnv(t, storetest.SQLite)
	e.verifiedDomain(t, "shop.example")
	body := sendBase + `, "to": "a@example.net"}`
	send := func(keys ...string) (int, string) {
		req, err := http.NewRequest("POST", e.Base+"/v1/send", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Authorization", "Bearer "+e.admin)
		req.Header.Set("Content-Type", "application/json")
		req.Header["Idempotency-Key"] = keys
		resp, err := e.HTTP.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	for _, keys := range [][]string{{""}, {"a", "b"}, {"a", ""}} {
		status, b := send(keys...)
		if status != 400 || !strings.Contains(b, `"error":"validation_error"`) || !strings.Contains(b, `"field":"idempotencyKey"`) {
			t.Fatalf("Idempotency-Key %q: %d %s, want 400 validation_error on idempotencyKey", keys, status, b)
		}
	}
	e.noMessages(t)
	if status, b := send("k-1", "k-1"); status != 200 || !bytes.Contains([]byte(b), []byte(`"queued"`)) {
		t.Fatalf("the same key twice: %d %s", status, b)
	}
	if status, b := send("k-1"); status != 200 || !strings.Contains(b, `"duplicate"`) {
		t.Fatalf("the key once more: %d %s, want duplicate", status, b)
	}
}

// A key request's scopes are read up to a small bound: two million scope
// names cost what thirteen do.
func TestCreateKeyScopesBounded(t *testing.T) {
	e := newEnv(t, storetest.SQLite)
	body := `{"name": "k", "scopes": [` + strings.Repeat(`"send",`, 2_000_000) + `"send"]}`
	r := e.Do(apitest.Request{Method: "POST", Path: "/v1/api-keys", Key: e.admin, Body: body})
	wantError(t, r, 400, mailroom.ECodeValidation)
	if !hasField(r, "scopes") || !strings.Contains(string(r.Body), "more than 12 scopes") {
		t.Fatalf("want a scopes error: %s", r.Body)
	}
}

// Two Content-Type headers are refused, whichever comes first: a proxy
// that takes the other one would read another body.
func TestTwoContentTypeHeaders(t *testing.T) {
	e := newEnv(t, storetest.SQLite)
	e.verifiedDomain(t, "shop.example")
	for _, pair := range [][2]string{{"application/json", "text/plain"}, {"text/plain", "application/json"}, {"application/json", "application/json"}} {
		req, _ := http.NewRequest("POST", e.Base+"/v1/send", strings.NewReader(sendBase+`, "to": "a@example.net"}`))
		req.Header.Set("Authorization", "Bearer "+e.admin)
		req.Header.Add("Content-Type", pair[0])
		req.Header.Add("Content-Type", pair[1])
		resp, err := e.HTTP.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != 415 {
			t.Errorf("Content-Type %q then %q: %d, want 415", pair[0], pair[1], resp.StatusCode)
		}
	}
	e.noMessages(t)
}
