package http_test

import (
	"context"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mailroom/mailroom"
	"github.com/mailroom/mailroom/apitest"
	"github.com/mailroom/mailroom/client/api"
	"github.com/mailroom/mailroom/delivery"
	mhttp "github.com/mailroom/mailroom/http"
	"github.com/mailroom/mailroom/storetest"
	"github.com/mailroom/mailroom/webhook"
)

// publicHook is an https URL on a public address literal: it passes the
// address guard without DNS, and nothing in these tests calls it.
const publicHook = "https://93.184.215.14/hook"

// holdDelivery keeps the deliverer from claiming anything, so that the
// messages a test logs add no events of their own.
func holdDelivery(_ *mhttp.Server, d *delivery.Deliverer) { d.Healthy = func() bool { return false } }

func (e *env) hookCall(t *testing.T, method, path string, body any) *apitest.Response {
	t.Helper()
	return e.Do(apitest.Request{Method: method, Path: path, Key: e.admin, Body: body})
}

// createHook adds an endpoint and returns the 201's body.
func (e *env) createHook(t *testing.T, body map[string]any) map[string]any {
	t.Helper()
	r := e.hookCall(t, "POST", "/v1/webhooks", body)
	if r.Status != 201 {
		t.Fatalf("create webhook: %d %s", r.Status, r.Body)
	}
	return r.Map()
}

func wantSecret(t *testing.T, s any) string {
	t.Helper()
	secret, _ := s.(string)
	key, err := webhook.ParseSecret(secret)
	if !strings.HasPrefix(secret, webhook.SecretPrefix) || err != nil || len(key) != 32 {
		t.Fatalf("secret %q is not whsec_ and base64 of 32 bytes (%v)", secret, err)
	}
	return secret
}

func detailMentions(r *apitest.Response, field, text string) bool {
	details, _ := r.Map()["details"].([]any)
	for _, d := range details {
		if m, _ := d.(map[string]any); m["field"] == field && strings.Contains(fmt.Sprint(m["message"]), text) {
			return true
		}
	}
	return false
}

func TestWebhookLifecycle(t *testing.T) {
	storetest.Each(t, func(t *testing.T, eng storetest.Engine) {
		e := newEnv(t, eng)
		r := e.hookCall(t, "POST", "/v1/webhooks", map[string]any{"url": publicHook,
			"events": []string{"email.delivered", "email.bounced", "email.delivered"}, "description": "orders app"})
		if r.Status != 201 {
			t.Fatalf("create webhook: %d %s", r.Status, r.Body)
		}
		created := apitest.Decode[api.WebhookCreated](r)
		id := created.ID
		secret := wantSecret(t, created.Secret)
		if !strings.HasPrefix(id, "wh_") || created.URL != publicHook || !created.Enabled || created.DisabledReason != nil ||
			!slices.Equal(created.Events, []api.EventType{api.EventEmailDelivered, api.EventEmailBounced}) || created.Description != "orders app" {
			t.Fatalf("created %s", r.Body)
		}
		if created.SecretRotation != nil {
			t.Errorf("a new endpoint shows a rotation: %s", r.Body)
		}

		// Only the create shows the secret: api.Webhook has no secret
		// member, which Decode refuses.
		got := e.hookCall(t, "GET", "/v1/webhooks/"+id, nil)
		if w := apitest.Decode[api.Webhook](got); got.Status != 200 || w.ID != id || !w.CreatedAt.Equal(created.CreatedAt) {
			t.Fatalf("get: %d %s", got.Status, got.Body)
		}
		if strings.Contains(string(got.Body), secret) {
			t.Fatalf("GET shows the secret: %s", got.Body)
		}
		list := apitest.Decode[api.List[api.Webhook]](e.hookCall(t, "GET", "/v1/webhooks", nil)).Data
		if len(list) != 1 || list[0].ID != id {
			t.Fatalf("list: %v", list)
		}

		// {} changes nothing.
		r = e.hookCall(t, "PATCH", "/v1/webhooks/"+id, map[string]any{})
		if same := apitest.Decode[api.Webhook](r); r.Status != 200 || same.URL != publicHook || !same.Enabled ||
			!slices.Equal(same.Events, created.Events) {
			t.Fatalf("empty PATCH: %d %s", r.Status, r.Body)
		}

		r = e.hookCall(t, "PATCH", "/v1/webhooks/"+id, map[string]any{"enabled": false, "events": []string{"*"}, "description": ""})
		if off := apitest.Decode[api.Webhook](r); r.Status != 200 || off.Enabled || off.DisabledReason == nil || *off.DisabledReason == "" ||
			!slices.Equal(off.Events, []api.EventType{api.EventAll}) || off.Description != "" {
			t.Fatalf("PATCH enabled false: %d %s", r.Status, r.Body)
		}
		wantError(t, e.hookCall(t, "POST", "/v1/webhooks/"+id+"/test", nil), 409, mailroom.ECodeInvalidState)
		r = e.hookCall(t, "PATCH", "/v1/webhooks/"+id, map[string]any{"enabled": true})
		if on := apitest.Decode[api.Webhook](r); r.Status != 200 || !on.Enabled || on.DisabledReason != nil {
			t.Fatalf("PATCH enabled true: %d %s", r.Status, r.Body)
		}

		r = e.hookCall(t, "POST", "/v1/webhooks/"+id+"/rotate-secret", nil)
		if r.Status != 200 {
			t.Fatalf("rotate: %d %s", r.Status, r.Body)
		}
		rot := apitest.Decode[api.WebhookSecret](r)
		if wantSecret(t, rot.Secret) == secret {
			t.Fatal("rotation kept the secret")
		}
		if d := rot.PreviousSecretExpiresAt.Sub(e.clock.Now()); d < 23*time.Hour || d > 25*time.Hour {
			t.Fatalf("previousSecretExpiresAt %v is not 24 h away", rot.PreviousSecretExpiresAt)
		}
		got = e.hookCall(t, "GET", "/v1/webhooks/"+id, nil)
		if w := apitest.Decode[api.Webhook](got); w.SecretRotation == nil || !w.SecretRotation.PreviousSecretExpiresAt.Equal(rot.PreviousSecretExpiresAt) {
			t.Fatalf("GET during the overlap: %s", got.Body)
		}
		e.clock.Advance(mailroom.WebhookRotationOverlap + time.Minute)
		if got := e.hookCall(t, "GET", "/v1/webhooks/"+id, nil).Map(); got["secretRotation"] != nil {
			t.Fatalf("the rotation shows after the overlap: %v", got)
		}

		if r := e.hookCall(t, "DELETE", "/v1/webhooks/"+id, nil); r.Status != 204 || len(r.Body) != 0 {
			t.Fatalf("delete: %d %s", r.Status, r.Body)
		}
		for _, c := range []struct{ method, path string }{
			{"GET", "/v1/webhooks/" + id}, {"PATCH", "/v1/webhooks/" + id}, {"DELETE", "/v1/webhooks/" + id},
			{"POST", "/v1/webhooks/" + id + "/rotate-secret"}, {"POST", "/v1/webhooks/" + id + "/test"},
			{"GET", "/v1/webhooks/" + id + "/deliveries"},
		} {
			var body any
			if c.method == "PATCH" {
				body = map[string]any{}
			}
			wantError(t, e.hookCall(t, c.method, c.path, body), 404, mailroom.ECodeNotFound)
		}
		if n, _ := listCount(t, e, "/v1/webhooks"); n != 0 {
			t.Fatalf("%d endpoints listed after the delete", n)
		}
	})
}

// Ids that no endpoint or event can have are not found, like unknown ones.
func TestWebhookMalformedIDsAreNotFound(t *testing.T) {
	e := newEnv(t, storetest.SQLite)
	for _, id := range []string{"nope", "wh_", "wh_" + strings.Repeat("A", 26), "evt_01jbz6y6m8q7k3v0r9x2n4s5t7", "wh_01jbz6y6m8q7k3v0r9x2n4s5t7x"} {
		for _, path := range []string{"/v1/webhooks/" + id, "/v1/webhooks/" + id + "/test", "/v1/webhooks/" + id + "/rotate-secret"} {
			method := "GET"
			if !strings.HasSuffix(path, id) {
				method = "POST"
			}
			wantError(t, e.hookCall(t, method, path, nil), 404, mailroom.ECodeNotFound)
		}
	}
	wantError(t, e.hookCall(t, "POST", "/v1/events/nope/replay", nil), 404, mailroom.ECodeNotFound)
	wantError(t, e.hookCall(t, "POST", "/v1/events/wh_01jbz6y6m8q7k3v0r9x2n4s5t7/replay", nil), 404, mailroom.ECodeNotFound)
}

// URLs are checked as the service is configured by default: https, and
// only to public addresses, whatever the name resolves to.
func TestWebhookURLGuard(t *testing.T) {
	storetest.Each(t, func(t *testing.T, eng storetest.Engine) {
		e := newEnv(t, eng)
		e.dns.SetA("loopback.example", "127.0.0.1")
		e.dns.SetA("hooks.example", "93.184.215.14")
		for _, u := range []string{
			"https://127.0.0.1/hook", "https://[::1]/hook", "https://10.1.2.3/hook", "https://192.168.0.7/hook",
			"https://169.254.169.254/latest/meta-data", "https://100.64.0.1/hook", "https://[::ffff:127.0.0.1]/hook",
			"https://loopback.example/hook", "https://unknown.example/hook",
			"http://93.184.215.14/hook", "ftp://93.184.215.14/hook", "https://user:pw@93.184.215.14/hook", "not a url",
		} {
			r := e.hookCall(t, "POST", "/v1/webhooks", map[string]any{"url": u, "events": []string{"*"}})
			wantError(t, r, 400, mailroom.ECodeValidation)
			if !hasField(r, "url") {
				t.Errorf("%s: details do not name url: %s", u, r.Body)
			}
		}
		if n, _ := listCount(t, e, "/v1/webhooks"); n != 0 {
			t.Fatalf("refused URLs left %d endpoints", n)
		}
		e.createHook(t, map[string]any{"url": publicHook, "events": []string{"*"}})
		h := e.createHook(t, map[string]any{"url": "https://hooks.example/mailroom?x=1", "events": []string{"*"}})
		// A PATCH to a private URL is refused too, and changes nothing.
		r := e.hookCall(t, "PATCH", "/v1/webhooks/"+h["id"].(string), map[string]any{"url": "https://loopback.example/", "enabled": false})
		wantError(t, r, 400, mailroom.ECodeValidation)
		if !hasField(r, "url") {
			t.Errorf("PATCH: details do not name url: %s", r.Body)
		}
		if got := e.hookCall(t, "GET", "/v1/webhooks/"+h["id"].(string), nil).Map(); got["url"] != h["url"] || got["enabled"] != true {
			t.Fatalf("a refused PATCH changed the endpoint: %v", got)
		}
	})
}

func TestWebhookRequestRules(t *testing.T) {
	e := newEnv(t, storetest.SQLite)
	for _, tc := range []struct {
		name  string
		body  any
		code  string
		field string
		says  string
	}{
		{"unknown type", map[string]any{"url": publicHook, "events": []string{"email.delivered", "email.viewed"}}, mailroom.ECodeValidation, "events", "email.viewed"},
		{"unknown type beside *", map[string]any{"url": publicHook, "events": []string{"*", "email.sent"}}, mailroom.ECodeValidation, "events", "email.sent"},
		{"no events", map[string]any{"url": publicHook, "events": []string{}}, mailroom.ECodeValidation, "events", ""},
		{"events missing", map[string]any{"url": publicHook}, mailroom.ECodeValidation, "events", ""},
		{"url missing", map[string]any{"events": []string{"*"}}, mailroom.ECodeValidation, "url", ""},
		{"enabled on create", map[string]any{"url": publicHook, "events": []string{"*"}, "enabled": false}, mailroom.ECodeValidation, "enabled", ""},
		{"unknown field", map[string]any{"url": publicHook, "events": []string{"*"}, "secret": "whsec_x"}, mailroom.ECodeValidation, "secret", ""},
		{"URL is not url", `{"URL": "` + publicHook + `", "events": ["*"]}`, mailroom.ECodeValidation, "URL", ""},
		{"events not a list", `{"url": "` + publicHook + `", "events": "*"}`, mailroom.ECodeInvalidJSON, "", ""},
		{"name twice", `{"url": "` + publicHook + `", "url": "https://93.184.215.15/", "events": ["*"]}`, mailroom.ECodeInvalidJSON, "", ""},
		{"description with a line break", map[string]any{"url": publicHook, "events": []string{"*"}, "description": "a\nb"}, mailroom.ECodeValidation, "description", ""},
	} {
		r := e.hookCall(t, "POST", "/v1/webhooks", tc.body)
		if r.Status != 400 || r.Code() != tc.code {
			t.Errorf("%s: %d %s, want 400 %s", tc.name, r.Status, r.Body, tc.code)
			continue
		}
		if tc.field != "" && !detailMentions(r, tc.field, tc.says) {
			t.Errorf("%s: details do not name %s (saying %q): %s", tc.name, tc.field, tc.says, r.Body)
		}
	}
	if n, _ := listCount(t, e, "/v1/webhooks"); n != 0 {
		t.Fatalf("refused creates left %d endpoints", n)
	}
	h := e.createHook(t, map[string]any{"url": publicHook, "events": []string{"*"}})
	path := "/v1/webhooks/" + h["id"].(string)
	for _, tc := range []struct {
		name, body, code, field string
	}{
		{"unknown type", `{"events": ["email.viewed"]}`, mailroom.ECodeValidation, "events"},
		{"unknown field", `{"enabled": true, "Enabled": false}`, mailroom.ECodeValidation, "Enabled"},
		{"enabled not a boolean", `{"enabled": "yes"}`, mailroom.ECodeInvalidJSON, ""},
		{"not an object", `[]`, mailroom.ECodeInvalidJSON, ""},
	} {
		r := e.hookCall(t, "PATCH", path, tc.body)
		if r.Status != 400 || r.Code() != tc.code || (tc.field != "" && !hasField(r, tc.field)) {
			t.Errorf("PATCH %s: %d %s, want 400 %s on %q", tc.name, r.Status, r.Body, tc.code, tc.field)
		}
	}
	wantError(t, e.Do(apitest.Request{Method: "PATCH", Path: path, Key: e.admin}), 415, mailroom.ECodeUnsupportedMediaType)
	if got := e.hookCall(t, "GET", path, nil).Map(); fmt.Sprint(got["events"]) != "[*]" || got["enabled"] != true {
		t.Fatalf("refused PATCHes changed the endpoint: %v", got)
	}
}

func TestWebhookLimitAndPaging(t *testing.T) {
	storetest.Each(t, func(t *testing.T, eng storetest.Engine) {
		e := newEnv(t, eng)
		ids := map[string]bool{}
		for i := range mailroom.DefaultMaxWebhooks {
			h := e.createHook(t, map[string]any{"url": fmt.Sprintf("%s/%d", publicHook, i), "events": []string{"email.bounced"}})
			ids[h["id"].(string)] = true
		}
		r := e.hookCall(t, "POST", "/v1/webhooks", map[string]any{"url": publicHook, "events": []string{"*"}})
		wantError(t, r, 400, mailroom.ECodeValidation)
		if !strings.Contains(string(r.Body), "20") || !strings.Contains(string(r.Body), "--max-webhooks") {
			t.Errorf("the 21st endpoint's refusal does not name the limit: %s", r.Body)
		}

		seen := map[string]bool{}
		var pages []int
		cursor, prev := "", ""
		for {
			r := e.hookCall(t, "GET", "/v1/webhooks?limit=7&cursor="+url.QueryEscape(cursor), nil)
			if r.Status != 200 {
				t.Fatalf("page: %d %s", r.Status, r.Body)
			}
			data := r.Map()["data"].([]any)
			pages = append(pages, len(data))
			for _, d := range data {
				id := d.(map[string]any)["id"].(string)
				if seen[id] || !ids[id] || (prev != "" && id >= prev) {
					t.Fatalf("page lists %s out of order or twice", id)
				}
				seen[id], prev = true, id
			}
			next, _ := r.Map()["nextCursor"].(string)
			if next == "" {
				break
			}
			cursor = next
			if len(pages) == 1 {
				// A cursor of this list pages no other.
				wantCursorRefused(t, e, "/v1/events?cursor="+url.QueryEscape(next))
			}
		}
		if fmt.Sprint(pages) != "[7 7 6]" || len(seen) != 20 {
			t.Fatalf("pages %v listed %d endpoints, want [7 7 6] and 20", pages, len(seen))
		}
		wantError(t, e.hookCall(t, "GET", "/v1/webhooks?limit=101", nil), 400, mailroom.ECodeValidation)
	})
}

func TestWebhookScopes(t *testing.T) {
	storetest.Each(t, func(t *testing.T, eng storetest.Engine) {
		e := newEnv(t, eng)
		h := e.createHook(t, map[string]any{"url": publicHook, "events": []string{"*"}})
		id := h["id"].(string)
		send := e.newKey(t, e.acct, mailroom.Scopes{mailroom.ScopeSend})
		hooks := e.newKey(t, e.acct, mailroom.Scopes{mailroom.ScopeWebhooks})
		templates := e.newKey(t, e.acct, mailroom.Scopes{mailroom.ScopeTemplates})
		for _, c := range []struct {
			method, path string
			body         any
		}{
			{"GET", "/v1/webhooks", nil},
			{"POST", "/v1/webhooks", map[string]any{"url": publicHook, "events": []string{"*"}}},
			{"GET", "/v1/webhooks/" + id, nil},
			{"PATCH", "/v1/webhooks/" + id, map[string]any{"enabled": false}},
			{"DELETE", "/v1/webhooks/" + id, nil},
			{"POST", "/v1/webhooks/" + id + "/rotate-secret", nil},
			{"GET", "/v1/webhooks/" + id + "/deliveries", nil},
			{"POST", "/v1/webhooks/" + id + "/test", nil},
			{"POST", "/v1/events/evt_01jbz6y6m8q7k3v0r9x2n4s5t7/replay", nil},
		} {
			r := e.Do(apitest.Request{Method: c.method, Path: c.path, Key: send, Body: c.body})
			wantError(t, r, 403, mailroom.ECodeInsufficientScope)
			if !strings.Contains(r.Str("message"), "webhooks") {
				t.Errorf("%s %s: the refusal does not name the scope: %s", c.method, c.path, r.Body)
			}
		}
		if got := e.hookCall(t, "GET", "/v1/webhooks/"+id, nil).Map(); got["enabled"] != true {
			t.Fatalf("a refused PATCH or DELETE acted: %v", got)
		}
		for _, key := range []string{send, hooks} {
			if r := e.Do(apitest.Request{Method: "GET", Path: "/v1/events", Key: key}); r.Status != 200 {
				t.Errorf("GET /v1/events: %d %s", r.Status, r.Body)
			}
		}
		r := e.Do(apitest.Request{Method: "GET", Path: "/v1/events", Key: templates})
		wantError(t, r, 403, mailroom.ECodeInsufficientScope)
		if !strings.Contains(r.Str("message"), `"send"`) || !strings.Contains(r.Str("message"), `"webhooks"`) {
			t.Errorf("the refusal does not name both scopes: %s", r.Body)
		}
		if r := e.Do(apitest.Request{Method: "GET", Path: "/v1/webhooks/" + id, Key: hooks}); r.Status != 200 {
			t.Errorf("GET with the webhooks scope: %d %s", r.Status, r.Body)
		}
		// Another account's endpoint is not found, never forbidden.
		other := storetest.NewAccount(t, e.store, "other")
		otherKey := e.newKey(t, other, mailroom.Scopes{mailroom.ScopeWebhooks})
		wantError(t, e.Do(apitest.Request{Method: "GET", Path: "/v1/webhooks/" + id, Key: otherKey}), 404, mailroom.ECodeNotFound)
		wantError(t, e.Do(apitest.Request{Method: "DELETE", Path: "/v1/webhooks/" + id, Key: otherKey}), 404, mailroom.ECodeNotFound)
		if n := len(e.Do(apitest.Request{Method: "GET", Path: "/v1/webhooks", Key: otherKey}).Map()["data"].([]any)); n != 0 {
			t.Errorf("another account lists %d endpoints", n)
		}
	})
}

func TestEventsList(t *testing.T) {
	storetest.Each(t, func(t *testing.T, eng storetest.Engine) {
		e := newEnvWithStore(t, eng.Open(t), holdDelivery)
		logMessages(t, e, 3) // an hour ago: three email.queued events
		msgs := e.Do(apitest.Request{Method: "GET", Path: "/v1/messages", Key: e.admin}).Map()["data"].([]any)
		msgID := msgs[0].(map[string]any)["id"].(string)
		h := e.createHook(t, map[string]any{"url": publicHook, "events": []string{"email.bounced"}})
		test := e.hookCall(t, "POST", "/v1/webhooks/"+h["id"].(string)+"/test", nil)
		if test.Status != 202 || test.Str("type") != "webhook.test" || !strings.HasPrefix(test.Str("id"), "evt_") {
			t.Fatalf("test: %d %s", test.Status, test.Body)
		}
		data, _ := test.Map()["data"].(map[string]any)
		if data["webhookId"] != h["id"] || data["message"] == "" {
			t.Fatalf("test event data: %s", test.Body)
		}
		if _, ok := test.Map()["messageId"]; ok {
			t.Errorf("a test event has a messageId: %s", test.Body)
		}

		send := e.newKey(t, e.acct, mailroom.Scopes{mailroom.ScopeSend})
		events := func(query string) []map[string]any {
			t.Helper()
			r := e.Do(apitest.Request{Method: "GET", Path: "/v1/events" + query, Key: send})
			if r.Status != 200 {
				t.Fatalf("GET /v1/events%s: %d %s", query, r.Status, r.Body)
			}
			var out []map[string]any
			for _, d := range r.Map()["data"].([]any) {
				out = append(out, d.(map[string]any))
			}
			return out
		}
		types := func(evs []map[string]any) string {
			var ts []string
			for _, ev := range evs {
				ts = append(ts, ev["type"].(string))
			}
			return strings.Join(ts, ",")
		}
		all := events("")
		if types(all) != "webhook.test,email.queued,email.queued,email.queued" {
			t.Fatalf("events newest first: %s", types(all))
		}
		if all[0]["id"] != test.Str("id") {
			t.Errorf("the listed test event %v is not the one answered %s", all[0], test.Body)
		}
		for _, ev := range all[1:] {
			d, _ := ev["data"].(map[string]any)
			if !strings.HasPrefix(fmt.Sprint(ev["messageId"]), "msg_") || ev["recipient"] != "r@x.example" || d["messageId"] != ev["messageId"] {
				t.Errorf("email event %v", ev)
			}
		}
		if got := types(events("?type=webhook.test")); got != "webhook.test" {
			t.Errorf("type=webhook.test: %s", got)
		}
		if got := types(events("?type=email.queued")); got != "email.queued,email.queued,email.queued" {
			t.Errorf("type=email.queued: %s", got)
		}
		if got := events("?type=email.bounced"); len(got) != 0 {
			t.Errorf("type=email.bounced: %v", got)
		}
		if got := events("?messageId=" + msgID); len(got) != 1 || got[0]["messageId"] != msgID {
			t.Errorf("messageId=%s: %v", msgID, got)
		}
		since := url.QueryEscape(rfc3339(e.clock.Now().Add(-30 * time.Minute)))
		if got := types(events("?since=" + since)); got != "webhook.test" {
			t.Errorf("since half an hour ago: %s", got)
		}
		if got := events("?since=" + url.QueryEscape(rfc3339(e.clock.Now().Add(time.Hour)))); len(got) != 0 {
			t.Errorf("since an hour ahead: %v", got)
		}
		if got := events("?type=email.queued&since=" + since); len(got) != 0 {
			t.Errorf("filters together: %v", got)
		}

		// Paging, with the cursor bound to the filters.
		r := e.Do(apitest.Request{Method: "GET", Path: "/v1/events?type=email.queued&limit=2", Key: send})
		next, _ := r.Map()["nextCursor"].(string)
		if r.Status != 200 || len(r.Map()["data"].([]any)) != 2 || next == "" {
			t.Fatalf("first page: %d %s", r.Status, r.Body)
		}
		rest := events("?type=email.queued&limit=2&cursor=" + url.QueryEscape(next))
		if len(rest) != 1 {
			t.Fatalf("second page: %v", rest)
		}
		wantCursorRefused(t, e, "/v1/events?limit=2&cursor="+url.QueryEscape(next))

		for _, tc := range []struct{ query, field, says string }{
			{"?type=email.viewed", "type", "email.viewed"},
			{"?type=*", "type", "*"},
			{"?type=email.queued&type=email.bounced", "type", ""},
			{"?messageId=nope", "messageId", ""},
			{"?since=yesterday", "since", ""},
			{"?since=2026-11-22", "since", ""},
			{"?limit=0", "limit", ""},
			{"?cursor=nope", "cursor", ""},
		} {
			r := e.Do(apitest.Request{Method: "GET", Path: "/v1/events" + tc.query, Key: send})
			wantError(t, r, 400, mailroom.ECodeValidation)
			if !detailMentions(r, tc.field, tc.says) {
				t.Errorf("%s: details do not name %s (saying %q): %s", tc.query, tc.field, tc.says, r.Body)
			}
		}
	})
}

func TestEventReplay(t *testing.T) {
	storetest.Each(t, func(t *testing.T, eng storetest.Engine) {
		e := newEnvWithStore(t, eng.Open(t), holdDelivery)
		logMessages(t, e, 1)
		all := e.hookCall(t, "GET", "/v1/events", nil).Map()["data"].([]any)
		queued := all[0].(map[string]any)["id"].(string)

		wantError(t, e.hookCall(t, "POST", "/v1/events/evt_01jbz6y6m8q7k3v0r9x2n4s5t7/replay", nil), 404, mailroom.ECodeNotFound)
		// No endpoint subscribes to it yet.
		wantError(t, e.hookCall(t, "POST", "/v1/events/"+queued+"/replay", nil), 409, mailroom.ECodeInvalidState)

		every := e.createHook(t, map[string]any{"url": publicHook, "events": []string{"*"}})["id"].(string)
		bounces := e.createHook(t, map[string]any{"url": publicHook + "/b", "events": []string{"email.bounced"}})["id"].(string)
		r := e.hookCall(t, "POST", "/v1/events/"+queued+"/replay", nil)
		if r.Status != 202 || r.Str("eventId") != queued || fmt.Sprint(r.Map()["endpoints"]) != "["+every+"]" {
			t.Fatalf("replay to every subscriber: %d %s", r.Status, r.Body)
		}
		r = e.hookCall(t, "POST", "/v1/events/"+queued+"/replay?endpoint="+every, nil)
		if r.Status != 202 || fmt.Sprint(r.Map()["endpoints"]) != "["+every+"]" {
			t.Fatalf("replay to one: %d %s", r.Status, r.Body)
		}
		// One that does not subscribe to the type, or is off, is refused.
		wantError(t, e.hookCall(t, "POST", "/v1/events/"+queued+"/replay?endpoint="+bounces, nil), 409, mailroom.ECodeInvalidState)
		e.hookCall(t, "PATCH", "/v1/webhooks/"+every, map[string]any{"enabled": false})
		wantError(t, e.hookCall(t, "POST", "/v1/events/"+queued+"/replay?endpoint="+every, nil), 409, mailroom.ECodeInvalidState)
		wantError(t, e.hookCall(t, "POST", "/v1/events/"+queued+"/replay", nil), 409, mailroom.ECodeInvalidState)

		wantError(t, e.hookCall(t, "POST", "/v1/events/"+queued+"/replay?endpoint=wh_01jbz6y6m8q7k3v0r9x2n4s5t7", nil), 404, mailroom.ECodeNotFound)
		wantError(t, e.hookCall(t, "POST", "/v1/events/"+queued+"/replay?endpoint=", nil), 400, mailroom.ECodeValidation)
		r = e.hookCall(t, "POST", "/v1/events/"+queued+"/replay?endpoint=nope", nil)
		wantError(t, r, 400, mailroom.ECodeValidation)
		if !hasField(r, "endpoint") {
			t.Errorf("details do not name endpoint: %s", r.Body)
		}
		wantError(t, e.hookCall(t, "POST", "/v1/events/"+queued+"/replay?endpoint="+every+"&endpoint="+bounces, nil), 400, mailroom.ECodeValidation)

		// A test event is replayed to the endpoint named, whatever it
		// subscribes to.
		test := e.hookCall(t, "POST", "/v1/webhooks/"+bounces+"/test", nil).Str("id")
		r = e.hookCall(t, "POST", "/v1/events/"+test+"/replay?endpoint="+bounces, nil)
		if r.Status != 202 || fmt.Sprint(r.Map()["endpoints"]) != "["+bounces+"]" {
			t.Fatalf("replay a test event: %d %s", r.Status, r.Body)
		}
		// Another account's event is not found.
		other := storetest.NewAccount(t, e.store, "other")
		otherKey := e.newKey(t, other, mailroom.Scopes{mailroom.ScopeWebhooks})
		wantError(t, e.Do(apitest.Request{Method: "POST", Path: "/v1/events/" + queued + "/replay", Key: otherKey}), 404, mailroom.ECodeNotFound)
	})
}

// The attempts log shows what the dispatcher recorded; the attempts here
// are recorded straight in the store, as the dispatcher records them.
func TestWebhookDeliveriesLog(t *testing.T) {
	storetest.Each(t, func(t *testing.T, eng storetest.Engine) {
		e := newEnv(t, eng)
		ctx := context.Background()
		id := e.createHook(t, map[string]any{"url": publicHook, "events": []string{"*"}})["id"].(string)
		path := "/v1/webhooks/" + id + "/deliveries"
		if n, next := listCount(t, e, path); n != 0 || next != "" {
			t.Fatalf("a new endpoint lists %d attempts", n)
		}
		for range 3 {
			if r := e.hookCall(t, "POST", "/v1/webhooks/"+id+"/test", nil); r.Status != 202 {
				t.Fatalf("test: %d %s", r.Status, r.Body)
			}
		}
		now := e.clock.Now()
		claimed, err := e.store.ClaimWebhookDeliveries(ctx, mailroom.WebhookClaim{Node: "node_test", Now: now, Lease: time.Minute, Limit: 10, PerEndpoint: 10})
		if err != nil || len(claimed) != 3 {
			t.Fatalf("claimed %d deliveries (%v), want 3", len(claimed), err)
		}
		var outcomes []*mailroom.WebhookOutcome
		for i, d := range claimed {
			d.Attempts++
			a := &mailroom.WebhookAttempt{
				ID: mailroom.NewID(mailroom.PrefixWebhookAttempt, now), AccountID: e.acct.ID, EndpointID: id, DeliveryID: d.ID,
				EventID: d.Event.ID, EventType: d.Event.Type, Attempt: d.Attempts, Status: mailroom.WebhookAttemptSucceeded,
				StatusCode: 204, Duration: 42 * time.Millisecond, CreatedAt: now,
			}
			if i == 0 {
				a.Status, a.StatusCode, a.Error, a.ResponseBody = mailroom.WebhookAttemptFailed, 500, "answered 500", "oops"
				a.NextAttemptAt = webhook.NextAttempt(1, now)
			}
			outcomes = append(outcomes, &mailroom.WebhookOutcome{Delivery: d, Attempt: a})
		}
		if err := e.store.RecordWebhookOutcomes(ctx, outcomes, now.Add(-mailroom.WebhookDisableAfter)); err != nil {
			t.Fatal(err)
		}
		failedEvent := claimed[0].Event.ID

		r := e.hookCall(t, "GET", path, nil)
		data, _ := r.Map()["data"].([]any)
		if r.Status != 200 || len(data) != 3 {
			t.Fatalf("attempts: %d %s", r.Status, r.Body)
		}
		var failed map[string]any
		for _, d := range data {
			a := d.(map[string]any)
			if a["type"] != "webhook.test" || a["attempt"] != float64(1) || a["durationMs"] != float64(42) || !strings.HasPrefix(a["id"].(string), "wha_") {
				t.Errorf("attempt %v", a)
			}
			if a["eventId"] == failedEvent {
				failed = a
			} else if a["status"] != "succeeded" || a["statusCode"] != float64(204) || a["error"] != nil || a["nextAttemptAt"] != nil {
				t.Errorf("succeeded attempt %v", a)
			}
		}
		if failed == nil || failed["status"] != "failed" || failed["statusCode"] != float64(500) || failed["error"] != "answered 500" ||
			failed["responseBody"] != "oops" || failed["nextAttemptAt"] == nil {
			t.Fatalf("failed attempt %v", failed)
		}

		if n, _ := listCount(t, e, path+"?status=failed"); n != 1 {
			t.Errorf("status=failed: %d attempts", n)
		}
		if n, _ := listCount(t, e, path+"?status=succeeded"); n != 2 {
			t.Errorf("status=succeeded: %d attempts", n)
		}
		if n, _ := listCount(t, e, path+"?eventId="+failedEvent); n != 1 {
			t.Errorf("eventId: %d attempts", n)
		}
		if n, _ := listCount(t, e, path+"?eventId="+failedEvent+"&status=succeeded"); n != 0 {
			t.Errorf("eventId and status=succeeded: %d attempts", n)
		}
		n1, next := listCount(t, e, path+"?limit=2")
		if n1 != 2 || next == "" {
			t.Fatalf("first page: %d, next %q", n1, next)
		}
		if n2, _ := listCount(t, e, path+"?limit=2&cursor="+url.QueryEscape(next)); n2 != 1 {
			t.Errorf("second page: %d", n2)
		}
		wantCursorRefused(t, e, path+"?status=failed&cursor="+url.QueryEscape(next))
		for _, q := range []string{"?status=pending", "?eventId=nope", "?status=failed&status=succeeded"} {
			wantError(t, e.hookCall(t, "GET", path+q, nil), 400, mailroom.ECodeValidation)
		}

		// Turning the endpoint off drops its pending deliveries: the failed
		// one is not retried after it is turned on again.
		e.hookCall(t, "PATCH", "/v1/webhooks/"+id, map[string]any{"enabled": false})
		e.hookCall(t, "PATCH", "/v1/webhooks/"+id, map[string]any{"enabled": true})
		later := now.Add(time.Hour)
		if again, err := e.store.ClaimWebhookDeliveries(ctx, mailroom.WebhookClaim{Node: "node_test", Now: later, Lease: time.Minute, Limit: 10, PerEndpoint: 10}); err != nil || len(again) != 0 {
			t.Fatalf("after off and on, %d deliveries are due (%v), want none", len(again), err)
		}
	})
}
