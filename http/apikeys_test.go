package http_test

import (
	"slices"
	"testing"

	"github.com/mailroom/mailroom"
	"github.com/mailroom/mailroom/apitest"
	"github.com/mailroom/mailroom/client/api"
	"github.com/mailroom/mailroom/resend"
	"github.com/mailroom/mailroom/storetest"
)

func TestAPIKeys(t *testing.T) {
	storetest.Each(t, func(t *testing.T, eng storetest.Engine) {
		e := newEnv(t, eng)

		r := e.Do(apitest.Request{Method: "POST", Path: "/v1/api-keys", Key: e.admin,
			Body: map[string]any{"name": "ci deploys", "scopes": []string{"templates", "send"}}})
		if r.Status != 201 {
			t.Fatalf("create: %d %s", r.Status, r.Body)
		}
		created := apitest.Decode[api.APIKeyCreated](r)
		full := created.Key
		keyID, _, ok := mailroom.ParseAPIKey(full)
		if !ok || keyID != created.KeyID || created.Status != api.KeyActive || created.LastUsedAt != nil || created.RevokedAt != nil {
			t.Fatalf("create answered %s", r.Body)
		}
		if !slices.Equal(created.Scopes, []api.Scope{api.ScopeSend, api.ScopeTemplates}) {
			t.Fatalf("scopes %v", created.Scopes)
		}

		// The new key works, within its scopes.
		wantError(t, e.Do(apitest.Request{Method: "GET", Path: "/v1/api-keys", Key: full}), 403, mailroom.ECodeInsufficientScope)

		// The key is shown once: never in a later answer (api.APIKey has
		// no key member: Decode refuses one).
		r = e.Do(apitest.Request{Method: "GET", Path: "/v1/api-keys/" + keyID, Key: e.admin})
		if r.Status != 200 || apitest.Decode[api.APIKey](r).Name != "ci deploys" {
			t.Fatalf("get: %d %s", r.Status, r.Body)
		}
		r = e.Do(apitest.Request{Method: "GET", Path: "/v1/api-keys?limit=1", Key: e.admin})
		list := apitest.Decode[api.List[api.APIKey]](r)
		if len(list.Data) != 1 || list.Data[0].KeyID != keyID || list.NextCursor == nil {
			t.Fatalf("first page should be the newest key with a next cursor: %s", r.Body)
		}
		r = e.Do(apitest.Request{Method: "GET", Path: "/v1/api-keys?limit=1&cursor=" + list.Cursor(), Key: e.admin})
		if page := apitest.Decode[api.List[api.APIKey]](r); len(page.Data) != 1 || page.NextCursor != nil {
			t.Fatalf("second page: %s", r.Body)
		}

		// Another account sees none of it.
		other := storetest.NewAccount(t, e.store, "globex")
		otherAdmin := e.newKey(t, other, mailroom.Scopes{mailroom.ScopeKeys})
		wantError(t, e.Do(apitest.Request{Method: "GET", Path: "/v1/api-keys/" + keyID, Key: otherAdmin}), 404, mailroom.ECodeNotFound)
		wantError(t, e.Do(apitest.Request{Method: "DELETE", Path: "/v1/api-keys/" + keyID, Key: otherAdmin}), 404, mailroom.ECodeNotFound)
		if data := e.Do(apitest.Request{Method: "GET", Path: "/v1/api-keys", Key: otherAdmin}).Map()["data"].([]any); len(data) != 1 {
			t.Fatalf("the other account lists %d keys, want its own 1", len(data))
		}

		// Revoke: the answer shows it, the key fails next, and revoking again is harmless.
		r = e.Do(apitest.Request{Method: "DELETE", Path: "/v1/api-keys/" + keyID, Key: e.admin})
		revoked := apitest.Decode[api.APIKey](r)
		if r.Status != 200 || revoked.Status != api.KeyRevoked || revoked.RevokedAt == nil {
			t.Fatalf("revoke: %d %s", r.Status, r.Body)
		}
		wantError(t, e.Do(apitest.Request{Method: "GET", Path: "/v1/api-keys", Key: full}), 401, mailroom.ECodeAPIKeyRevoked)
		r2 := e.Do(apitest.Request{Method: "DELETE", Path: "/v1/api-keys/" + keyID, Key: e.admin})
		if again := apitest.Decode[api.APIKey](r2); r2.Status != 200 || again.RevokedAt == nil || !again.RevokedAt.Equal(*revoked.RevokedAt) {
			t.Fatalf("second revoke: %d %s", r2.Status, r2.Body)
		}
		wantError(t, e.Do(apitest.Request{Method: "DELETE", Path: "/v1/api-keys/nosuchkey", Key: e.admin}), 404, mailroom.ECodeNotFound)
	})
}

// GET /v1/api-keys/current answers any valid key with itself, whatever its
// scopes, so a client learns what it may do; it never shows the secret.
func TestCurrentAPIKey(t *testing.T) {
	storetest.Each(t, func(t *testing.T, eng storetest.Engine) {
		e := newEnv(t, eng)
		acct := storetest.NewAccount(t, e.store, "globex")
		full := e.newKey(t, acct, mailroom.Scopes{mailroom.ScopeDomains})
		keyID, _, _ := mailroom.ParseAPIKey(full)

		r := e.Do(apitest.Request{Method: "GET", Path: "/v1/api-keys/current", Key: full})
		current := apitest.Decode[api.APIKey](r) // no key member
		if r.Status != 200 || current.KeyID != keyID || current.Status != api.KeyActive {
			t.Fatalf("current: %d %s", r.Status, r.Body)
		}
		if !slices.Equal(current.Scopes, []api.Scope{api.ScopeDomains}) {
			t.Fatalf("scopes %v", current.Scopes)
		}
		wantError(t, e.Do(apitest.Request{Method: "GET", Path: "/v1/api-keys/current"}), 401, mailroom.ECodeMissingAPIKey)
		wantError(t, e.Do(apitest.Request{Method: "DELETE", Path: "/v1/api-keys/current", Key: full}), 405, mailroom.ECodeMethodNotAllowed)

		// Revoked, it is refused like on every route.
		e.Do(apitest.Request{Method: "DELETE", Path: "/v1/api-keys/" + keyID, Key: e.newKey(t, acct, mailroom.Scopes{mailroom.ScopeKeys})})
		wantError(t, e.Do(apitest.Request{Method: "GET", Path: "/v1/api-keys/current", Key: full}), 401, mailroom.ECodeAPIKeyRevoked)
	})
}

// An API key's answers show the one domain it may send from (by name,
// whether the create named it by name or by id, on /v1 or Resend's
// route), and null for a key of the whole account.
func TestAPIKeyShowsItsDomain(t *testing.T) {
	storetest.Each(t, func(t *testing.T, eng storetest.Engine) {
		e := newEnv(t, eng)
		shop := e.verifiedDomain(t, "shop.example")
		shopID := decodeExactly[resend.Domain](t, e.resendDo("GET", "/domains/shop.example", e.admin, nil)).ID
		create := func(body map[string]any) api.APIKeyCreated {
			t.Helper()
			r := e.Do(apitest.Request{Method: "POST", Path: "/v1/api-keys", Key: e.admin, Body: body})
			if r.Status != 201 {
				t.Fatalf("create %v: %d %s", body, r.Status, r.Body)
			}
			return apitest.Decode[api.APIKeyCreated](r)
		}
		restricted := create(map[string]any{"name": "shop", "scopes": []string{"send"}, "domain": shopID})
		if restricted.Domain == nil || *restricted.Domain != "shop.example" {
			t.Fatalf("create by the domain's id shows domain %v", restricted.Domain)
		}
		whole := create(map[string]any{"name": "all", "scopes": []string{"send"}})
		if whole.Domain != nil {
			t.Fatalf("an unrestricted key shows domain %q", *whole.Domain)
		}
		byResend := decodeExactly[resend.CreatedAPIKey](t, e.resendDo("POST", "/api-keys", e.admin,
			map[string]any{"name": "shop app", "permission": "sending_access", "domain_id": shop.Name}))

		domainOf := func(r *apitest.Response) any {
			t.Helper()
			if r.Status != 200 {
				t.Fatalf("%d %s", r.Status, r.Body)
			}
			m := r.Map()
			if _, ok := m["domain"]; !ok {
				t.Fatalf("no domain member: %s", r.Body)
			}
			return m["domain"]
		}
		for id, want := range map[string]any{restricted.KeyID: "shop.example", whole.KeyID: nil, byResend.ID: "shop.example"} {
			if got := domainOf(e.Do(apitest.Request{Method: "GET", Path: "/v1/api-keys/" + id, Key: e.admin})); got != want {
				t.Errorf("GET %s: domain %v, want %v", id, got, want)
			}
		}
		if got := domainOf(e.Do(apitest.Request{Method: "GET", Path: "/v1/api-keys/current", Key: restricted.Key})); got != "shop.example" {
			t.Errorf("current: domain %v", got)
		}
		shown := map[string]*string{}
		for _, k := range apitest.Decode[api.List[api.APIKey]](e.Do(apitest.Request{Method: "GET", Path: "/v1/api-keys", Key: e.admin})).Data {
			shown[k.KeyID] = k.Domain
		}
		if d := shown[restricted.KeyID]; d == nil || *d != "shop.example" || shown[whole.KeyID] != nil {
			t.Errorf("the list shows domains %v", shown)
		}
		if r := e.Do(apitest.Request{Method: "DELETE", Path: "/v1/api-keys/" + restricted.KeyID, Key: e.admin}); domainOf(r) != "shop.example" {
			t.Errorf("revoke: %s", r.Body)
		}
	})
}
