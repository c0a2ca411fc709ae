package http_test

import (
	"encoding/json"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mailroom/mailroom"
	"github.com/mailroom/mailroom/apitest"
	"github.com/mailroom/mailroom/storetest"
)

// resendCall calls one of Resend's routes with key, checking the answer
// against the OpenAPI document.
func (e *env) resendCall(t *testing.T, key, method, path string, body any) *apitest.Response {
	t.Helper()
	return e.Do(apitest.Request{Method: method, Path: path, Key: key, Body: body})
}

// wantMembers checks that a JSON object has exactly the members named.
func wantMembers(t *testing.T, what string, m map[string]any, names ...string) {
	t.Helper()
	got := slices.Sorted(maps.Keys(m))
	slices.Sort(names)
	if !slices.Equal(got, names) {
		t.Fatalf("%s has members %v, want %v: %v", what, got, names, m)
	}
}

func TestResendWebhookRoutes(t *testing.T) {
	storetest.Each(t, func(t *testing.T, eng storetest.Engine) {
		e := newEnv(t, eng)
		r := e.resendCall(t, e.admin, "POST", "/webhooks", map[string]any{"endpoint": publicHook,
			"events": []string{"email.sent", "email.delivered", "email.bounced"}})
		created := r.Map()
		if r.Status != 200 || created["object"] != "webhook" || !strings.HasPrefix(created["id"].(string), "wh_") {
			t.Fatalf("create: %d %s", r.Status, r.Body)
		}
		wantMembers(t, "the create's answer", created, "object", "id", "signing_secret")
		id, secret := created["id"].(string), wantSecret(t, created["signing_secret"])

		got := e.resendCall(t, e.admin, "GET", "/webhooks/"+id, nil)
		w := got.Map()
		wantMembers(t, "GET /webhooks/{id}", w, "object", "id", "endpoint", "events", "status", "signing_secret", "created_at")
		if got.Status != 200 || w["object"] != "webhook" || w["id"] != id || w["endpoint"] != publicHook || w["status"] != "enabled" ||
			w["signing_secret"] != secret || !slices.Equal(strs(w["events"]), []string{"email.sent", "email.delivered", "email.bounced"}) {
			t.Fatalf("get: %d %s", got.Status, got.Body)
		}
		if _, err := time.Parse(time.RFC3339, w["created_at"].(string)); err != nil {
			t.Errorf("created_at: %v", err)
		}
		// /v1 shows the same endpoint in Mailroom's vocabulary.
		v1 := e.Do(apitest.Request{Method: "GET", Path: "/v1/webhooks/" + id, Key: e.admin}).Map()
		if !slices.Equal(strs(v1["events"]), []string{"email.queued", "email.delivered", "email.bounced"}) {
			t.Fatalf("/v1 shows %v", v1)
		}

		// PATCH turns it off through the service (/v1 says why), changes
		// what is given and keeps the rest; null, "" and [] are absent.
		r = e.resendCall(t, e.admin, "PATCH", "/webhooks/"+id, map[string]any{"status": "disabled"})
		wantMembers(t, "the update's answer", r.Map(), "object", "id")
		if r.Status != 200 || r.Str("object") != "webhook" || r.Str("id") != id {
			t.Fatalf("patch: %d %s", r.Status, r.Body)
		}
		if w := e.resendCall(t, e.admin, "GET", "/webhooks/"+id, nil).Map(); w["status"] != "disabled" {
			t.Fatalf("after disabling: %v", w)
		}
		if v1 := e.Do(apitest.Request{Method: "GET", Path: "/v1/webhooks/" + id, Key: e.admin}).Map(); v1["enabled"] != false || v1["disabledReason"] == nil {
			t.Fatalf("/v1 after disabling: %v", v1)
		}
		other := "https://93.184.215.15/other"
		e.resendCall(t, e.admin, "PATCH", "/webhooks/"+id, map[string]any{"endpoint": other, "events": []string{"email.delivery_delayed"}})
		r = e.resendCall(t, e.admin, "PATCH", "/webhooks/"+id, map[string]any{"endpoint": nil, "events": []string{}, "status": "enabled"})
		if r.Status != 200 {
			t.Fatalf("patch: %d %s", r.Status, r.Body)
		}
		w = e.resendCall(t, e.admin, "GET", "/webhooks/"+id, nil).Map()
		if w["endpoint"] != other || w["status"] != "enabled" || !slices.Equal(strs(w["events"]), []string{"email.delivery_delayed"}) {
			t.Fatalf("after the patches: %v", w)
		}

		// The rotation answers the new secret, which GET shows from then on.
		r = e.resendCall(t, e.admin, "POST", "/webhooks/"+id+"/signing-secret/rotate", nil)
		rotated := r.Map()
		wantMembers(t, "the rotation's answer", rotated, "object", "id", "signing_secret")
		if newSecret := wantSecret(t, rotated["signing_secret"]); r.Status != 200 || newSecret == secret || rotated["id"] != id ||
			e.resendCall(t, e.admin, "GET", "/webhooks/"+id, nil).Str("signing_secret") != newSecret {
			t.Fatalf("rotate: %d %s", r.Status, r.Body)
		}

		list := e.resendCall(t, e.admin, "GET", "/webhooks", nil)
		lm := list.Map()
		wantMembers(t, "the list", lm, "object", "has_more", "data")
		data, _ := lm["data"].([]any)
		if list.Status != 200 || lm["object"] != "list" || lm["has_more"] != false || len(data) != 1 {
			t.Fatalf("list: %d %s", list.Status, list.Body)
		}
		wantMembers(t, "a listed webhook", data[0].(map[string]any), "id", "endpoint", "events", "status", "created_at")

		// DELETE answers 200 with a body (the Node SDK parses every 2xx),
		// and the endpoint is gone.
		r = e.resendCall(t, e.admin, "DELETE", "/webhooks/"+id, nil)
		wantMembers(t, "the delete's answer", r.Map(), "object", "id", "deleted")
		if r.Status != 200 || r.Map()["deleted"] != true || r.Str("id") != id {
			t.Fatalf("delete: %d %s", r.Status, r.Body)
		}
		wantResendError(t, e.resendCall(t, e.admin, "GET", "/webhooks/"+id, nil), 404, "not_found", id)
		wantResendError(t, e.resendCall(t, e.admin, "DELETE", "/webhooks/"+id, nil), 404, "not_found", id)
	})
}

func TestResendWebhookErrors(t *testing.T) {
	storetest.Each(t, func(t *testing.T, eng storetest.Engine) {
		e := newEnv(t, eng)
		id := e.resendCall(t, e.admin, "POST", "/webhooks", map[string]any{"endpoint": publicHook, "events": []string{"email.sent"}}).Str("id")
		for _, c := range []struct {
			what         string
			method, path string
			body         any
			status       int
			name, says   string
		}{
			{"no endpoint", "POST", "/webhooks", map[string]any{"endpoint": "", "events": []string{"email.sent"}}, 422, "missing_required_field", "endpoint is required"},
			{"no events", "POST", "/webhooks", map[string]any{"endpoint": publicHook}, 422, "missing_required_field", "events is required"},
			{"an event Mailroom does not send", "POST", "/webhooks", map[string]any{"endpoint": publicHook, "events": []string{"email.sent", "contact.created"}}, 422, "validation_error", "events[1] Mailroom does not send contact.created events"},
			{"Mailroom's name for a Resend event", "POST", "/webhooks", map[string]any{"endpoint": publicHook, "events": []string{"email.queued"}}, 422, "validation_error", `"email.queued" is not an event name`},
			{"a loopback endpoint", "POST", "/webhooks", map[string]any{"endpoint": "https://127.0.0.1/hook", "events": []string{"email.sent"}}, 422, "validation_error", "endpoint "},
			{"plain http", "POST", "/webhooks", map[string]any{"endpoint": "http://93.184.215.14/hook", "events": []string{"email.sent"}}, 422, "validation_error", "endpoint "},
			{"not JSON", "POST", "/webhooks", "{", 400, "validation_error", "JSON"},
			{"an unknown status", "PATCH", "/webhooks/" + id, map[string]any{"status": "paused"}, 422, "validation_error", `status must be "enabled" or "disabled"`},
			{"a loopback endpoint on PATCH", "PATCH", "/webhooks/" + id, map[string]any{"endpoint": "https://[::1]/hook"}, 422, "validation_error", "endpoint "},
			{"an unknown id", "GET", "/webhooks/wh_01jbz6y6m8q7k3v0r9x2n4s5t7", nil, 404, "not_found", "wh_01jbz6y6m8q7k3v0r9x2n4s5t7"},
			{"a malformed id", "PATCH", "/webhooks/nope", map[string]any{"status": "enabled"}, 404, "not_found", "nope"},
			{"rotating an unknown id", "POST", "/webhooks/wh_01jbz6y6m8q7k3v0r9x2n4s5t7/signing-secret/rotate", nil, 404, "not_found", "wh_01jbz6y6m8q7k3v0r9x2n4s5t7"},
			{"a limit past 100", "GET", "/webhooks?limit=101", nil, 422, "validation_error", "limit must be a whole number from 1 to 100"},
			{"after and before", "GET", "/webhooks?after=" + id + "&before=" + id, nil, 422, "validation_error", "before cannot be given with after"},
		} {
			wantResendError(t, e.resendCall(t, e.admin, c.method, c.path, c.body), c.status, c.name, c.says)
		}

		// A key without the webhooks scope is Resend's restricted key.
		send := e.newKey(t, e.acct, mailroom.Scopes{mailroom.ScopeSend})
		wantResendError(t, e.resendCall(t, send, "GET", "/webhooks/"+id, nil), 401, "restricted_api_key", "")

		// Body-less routes take Content-Type: application/json with no
		// body, as the SDKs send them.
		for _, c := range []struct{ method, path string }{{"POST", "/webhooks/" + id + "/signing-secret/rotate"}, {"GET", "/webhooks"}, {"DELETE", "/webhooks/" + id}} {
			r := e.Do(apitest.Request{Method: c.method, Path: c.path, Key: e.admin, Header: map[string]string{"Content-Type": "application/json"}})
			if r.Status != 200 {
				t.Errorf("%s %s with an empty JSON body: %d %s", c.method, c.path, r.Status, r.Body)
			}
		}
	})
}

func TestResendWebhookPaging(t *testing.T) {
	storetest.Each(t, func(t *testing.T, eng storetest.Engine) {
		e := newEnv(t, eng)
		var ids []string // oldest first
		for range 3 {
			ids = append(ids, e.resendCall(t, e.admin, "POST", "/webhooks", map[string]any{"endpoint": publicHook, "events": []string{"email.sent"}}).Str("id"))
		}
		page := func(q string) ([]string, bool) {
			t.Helper()
			r := e.resendCall(t, e.admin, "GET", "/webhooks"+q, nil)
			if r.Status != 200 {
				t.Fatalf("list%s: %d %s", q, r.Status, r.Body)
			}
			var out struct {
				HasMore bool `json:"has_more"`
				Data    []struct {
					ID string `json:"id"`
				} `json:"data"`
			}
			if err := json.Unmarshal(r.Body, &out); err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, d := range out.Data {
				got = append(got, d.ID)
			}
			return got, out.HasMore
		}
		for _, c := range []struct {
			q    string
			want []string
			more bool
		}{
			{"", []string{ids[2], ids[1], ids[0]}, false},
			{"?limit=2", []string{ids[2], ids[1]}, true},
			{"?limit=2&after=" + ids[1], []string{ids[0]}, false},
			{"?limit=1&after=" + ids[2], []string{ids[1]}, true},
			{"?limit=1&before=" + ids[0], []string{ids[1]}, true},
			{"?limit=2&before=" + ids[0], []string{ids[2], ids[1]}, false},
		} {
			if got, more := page(c.q); !slices.Equal(got, c.want) || more != c.more {
				t.Errorf("list%s: %v has_more %v, want %v %v", c.q, got, more, c.want, c.more)
			}
		}
	})
}

// strs is a JSON array of strings.
func strs(v any) []string {
	var out []string
	for _, x := range v.([]any) {
		out = append(out, x.(string))
	}
	return out
}
