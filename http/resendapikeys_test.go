package http_test

import (
	"strings"
	"testing"

	"github.com/mailroom/mailroom"
	"github.com/mailroom/mailroom/apitest"
	"github.com/mailroom/mailroom/resend"
	"github.com/mailroom/mailroom/storetest"
)

// Resend's key routes: a create answers the id and the token once, the
// list never shows a token, permissions are scopes (a sending_access key
// sends and is refused elsewhere as Resend refuses it), and a removed key
// stops working and leaves the list.
func TestResendAPIKeys(t *testing.T) {
	storetest.Each(t, func(t *testing.T, eng storetest.Engine) {
		e := newEnv(t, eng)
		e.verifiedDomain(t, "shop.example")
		e.mailDomain("example.net")

		r := e.resendDo("POST", "/api-keys", e.admin, map[string]any{"name": "ci"})
		full := decodeExactly[resend.CreatedAPIKey](t, r)
		if r.Status != 200 || !mailroom.ValidKeyID(full.ID) || !strings.Contains(full.Token, full.ID) {
			t.Fatalf("create: %d %s", r.Status, r.Body)
		}
		if r := e.resendDo("GET", "/domains", full.Token, nil); r.Status != 200 {
			t.Fatalf("a full_access key on /domains: %d %s", r.Status, r.Body)
		}

		r = e.resendDo("POST", "/api-keys", e.admin, map[string]any{"name": "app", "permission": "sending_access"})
		sending := decodeExactly[resend.CreatedAPIKey](t, r)
		wantResendError(t, e.resendDo("GET", "/domains", sending.Token, nil), 401, "restricted_api_key")
		wantResendError(t, e.resendDo("GET", "/api-keys", sending.Token, nil), 401, "restricted_api_key")
		wantResendError(t, e.resendDo("POST", "/api-keys", sending.Token, map[string]any{"name": "x"}), 401, "restricted_api_key")
		if r := e.Do(apitest.Request{Method: "POST", Path: "/v1/send", Key: sending.Token, Body: map[string]any{
			"from": "orders@shop.example", "to": "ann@example.net", "subject": "Hi", "text": "Hi."}}); r.Status != 200 {
			t.Fatalf("a sending_access key cannot send: %d %s", r.Status, r.Body)
		}
		v1 := e.Do(apitest.Request{Method: "GET", Path: "/v1/api-keys/" + sending.ID, Key: e.admin})
		if got := v1.Map()["scopes"].([]any); len(got) != 1 || got[0] != "send" {
			t.Fatalf("sending_access as /v1 shows it: %s", v1.Body)
		}

		wantResendError(t, e.resendDo("POST", "/api-keys", e.admin, map[string]any{"name": "x", "permission": "read_only"}), 422, "validation_error")
		wantResendError(t, e.resendDo("POST", "/api-keys", e.admin, map[string]any{"permission": "full_access"}), 422, "validation_error")

		r = e.resendDo("GET", "/api-keys", e.admin, nil)
		if strings.Contains(string(r.Body), "mailroom_") || strings.Contains(string(r.Body), "token") {
			t.Fatalf("the list shows a token: %s", r.Body)
		}
		list := decodeExactly[resend.APIKeyList](t, r)
		names := map[string]string{}
		for _, k := range list.Data {
			names[k.ID] = k.Name
			if k.CreatedAt == "" {
				t.Errorf("key without created_at: %+v", k)
			}
		}
		if list.Object != "list" || list.HasMore || names[full.ID] != "ci" || names[sending.ID] != "app" || len(names) != 3 {
			t.Fatalf("list: %s", r.Body)
		}

		r = e.resendDo("DELETE", "/api-keys/"+full.ID, e.admin, nil)
		if got := decodeExactly[resend.DeletedAPIKey](t, r); r.Status != 200 || got != (resend.DeletedAPIKey{Object: "api_key", ID: full.ID, Deleted: true}) {
			t.Fatalf("delete: %d %s", r.Status, r.Body)
		}
		wantResendError(t, e.resendDo("GET", "/domains", full.Token, nil), 403, "invalid_api_key")
		wantResendError(t, e.resendDo("DELETE", "/api-keys/"+full.ID, e.admin, nil), 404, "not_found")
		if l := decodeExactly[resend.APIKeyList](t, e.resendDo("GET", "/api-keys", e.admin, nil)); len(l.Data) != 2 {
			t.Fatalf("a removed key is still listed: %+v", l)
		}

		// Another account's key is not found, and not removed.
		other := e.newKey(t, storetest.NewAccount(t, e.store, "globex"), mailroom.Scopes(mailroom.AllScopes))
		wantResendError(t, e.resendDo("DELETE", "/api-keys/"+sending.ID, other, nil), 404, "not_found")
		if r := e.resendDo("GET", "/api-keys", sending.Token, nil); r.Status != 401 {
			t.Fatalf("the key was touched: %d %s", r.Status, r.Body)
		}
	})
}

// A key restricted to one domain (Resend's domain_id, /v1's domain) sends
// from that domain alone, through /v1/send and each item of
// /v1/send/batch; full_access drops domain_id as Resend does.
func TestKeyRestrictedToDomain(t *testing.T) {
	storetest.Each(t, func(t *testing.T, eng storetest.Engine) {
		e := newEnv(t, eng)
		shop := e.verifiedDomain(t, "shop.example")
		e.verifiedDomain(t, "news.example")
		e.mailDomain("example.net")
		shopID := decodeExactly[resend.Domain](t, e.resendDo("GET", "/domains/shop.example", e.admin, nil)).ID
		send := func(key, from string) *apitest.Response {
			return e.Do(apitest.Request{Method: "POST", Path: "/v1/send", Key: key, Body: map[string]any{
				"from": from, "to": "ann@example.net", "subject": "Hi", "text": "Hi."}})
		}

		byResend := decodeExactly[resend.CreatedAPIKey](t, e.resendDo("POST", "/api-keys", e.admin,
			map[string]any{"name": "shop app", "permission": "sending_access", "domain_id": shopID})).Token
		r := e.Do(apitest.Request{Method: "POST", Path: "/v1/api-keys", Key: e.admin,
			Body: map[string]any{"name": "shop app", "scopes": []string{"send"}, "domain": shop.Name}})
		if r.Status != 201 {
			t.Fatalf("/v1 create with domain: %d %s", r.Status, r.Body)
		}
		byV1 := r.Str("key")
		for _, key := range []string{byResend, byV1} {
			if r := send(key, "orders@shop.example"); r.Status != 200 {
				t.Fatalf("from its domain: %d %s", r.Status, r.Body)
			}
			r := send(key, "news@news.example")
			wantError(t, r, 403, "domain_not_verified")
			if !strings.Contains(r.Str("message"), "may send from shop.example only") {
				t.Fatalf("refusal does not say why: %s", r.Body)
			}
			r = e.Do(apitest.Request{Method: "POST", Path: "/v1/send/batch", Key: key, Body: map[string]any{"messages": []map[string]any{
				{"from": "orders@shop.example", "to": "ann@example.net", "subject": "Hi", "text": "Hi."},
				{"from": "news@news.example", "to": "ann@example.net", "subject": "Hi", "text": "Hi."}}}})
			if !strings.Contains(string(r.Body), "may send from shop.example only") || strings.Count(string(r.Body), "msg_") != 1 {
				t.Fatalf("batch: %d %s", r.Status, r.Body)
			}
		}

		// full_access ignores domain_id, as Resend does.
		fullKey := decodeExactly[resend.CreatedAPIKey](t, e.resendDo("POST", "/api-keys", e.admin,
			map[string]any{"name": "all", "permission": "full_access", "domain_id": shopID})).Token
		if r := send(fullKey, "news@news.example"); r.Status != 200 {
			t.Fatalf("full_access with domain_id: %d %s", r.Status, r.Body)
		}

		// A restriction names a domain of the account, on a key that
		// cannot lift it.
		wantResendError(t, e.resendDo("POST", "/api-keys", e.admin,
			map[string]any{"name": "x", "permission": "sending_access", "domain_id": "dom_01kaxyz0000000000000000000"}), 422, "validation_error")
		other := e.newKey(t, storetest.NewAccount(t, e.store, "globex"), mailroom.Scopes(mailroom.AllScopes))
		wantResendError(t, e.resendDo("POST", "/api-keys", other,
			map[string]any{"name": "x", "permission": "sending_access", "domain_id": shopID}), 422, "validation_error")
		wantError(t, e.Do(apitest.Request{Method: "POST", Path: "/v1/api-keys", Key: e.admin,
			Body: map[string]any{"name": "x", "scopes": []string{"send", "keys"}, "domain": "shop.example"}}), 400, "validation_error")
		wantError(t, e.Do(apitest.Request{Method: "POST", Path: "/v1/api-keys", Key: e.admin,
			Body: map[string]any{"name": "x", "scopes": []string{"send"}, "domain": "elsewhere.example"}}), 400, "validation_error")
	})
}
