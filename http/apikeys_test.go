package http_test

import (
	"testing"

	"github.com/mailroom/mailroom"
	"github.com/mailroom/mailroom/apitest"
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
		created := r.Map()
		full, _ := created["key"].(string)
		keyID, _, ok := mailroom.ParseAPIKey(full)
		if !ok || keyID != created["keyId"] || created["status"] != "active" {
			t.Fatalf("create answered %s", r.Body)
		}
		if scopes := created["scopes"].([]any); len(scopes) != 2 || scopes[0] != "send" || scopes[1] != "templates" {
			t.Fatalf("scopes %v", scopes)
		}

		// The new key works, within its scopes.
		wantError(t, e.Do(apitest.Request{Method: "GET", Path: "/v1/api-keys", Key: full}), 403, mailroom.ECodeInsufficientScope)

		// The key is shown once: never in a later answer.
		r = e.Do(apitest.Request{Method: "GET", Path: "/v1/api-keys/" + keyID, Key: e.admin})
		if r.Status != 200 || r.Map()["key"] != nil || r.Str("name") != "ci deploys" {
			t.Fatalf("get: %d %s", r.Status, r.Body)
		}
		r = e.Do(apitest.Request{Method: "GET", Path: "/v1/api-keys?limit=1", Key: e.admin})
		list := r.Map()
		if data := list["data"].([]any); len(data) != 1 || data[0].(map[string]any)["keyId"] != keyID || list["nextCursor"] == nil {
			t.Fatalf("first page should be the newest key with a next cursor: %s", r.Body)
		}
		r = e.Do(apitest.Request{Method: "GET", Path: "/v1/api-keys?limit=1&cursor=" + list["nextCursor"].(string), Key: e.admin})
		if data := r.Map()["data"].([]any); len(data) != 1 || r.Map()["nextCursor"] != nil {
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
		if r.Status != 200 || r.Str("status") != "revoked" || r.Str("revokedAt") == "" {
			t.Fatalf("revoke: %d %s", r.Status, r.Body)
		}
		wantError(t, e.Do(apitest.Request{Method: "GET", Path: "/v1/api-keys", Key: full}), 401, mailroom.ECodeAPIKeyRevoked)
		if r2 := e.Do(apitest.Request{Method: "DELETE", Path: "/v1/api-keys/" + keyID, Key: e.admin}); r2.Status != 200 || r2.Str("revokedAt") != r.Str("revokedAt") {
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
		if r.Status != 200 || r.Str("keyId") != keyID || r.Map()["key"] != nil || r.Str("status") != "active" {
			t.Fatalf("current: %d %s", r.Status, r.Body)
		}
		if scopes := r.Map()["scopes"].([]any); len(scopes) != 1 || scopes[0] != "domains" {
			t.Fatalf("scopes %v", scopes)
		}
		wantError(t, e.Do(apitest.Request{Method: "GET", Path: "/v1/api-keys/current"}), 401, mailroom.ECodeMissingAPIKey)
		wantError(t, e.Do(apitest.Request{Method: "DELETE", Path: "/v1/api-keys/current", Key: full}), 405, mailroom.ECodeMethodNotAllowed)

		// Revoked, it is refused like on every route.
		e.Do(apitest.Request{Method: "DELETE", Path: "/v1/api-keys/" + keyID, Key: e.newKey(t, acct, mailroom.Scopes{mailroom.ScopeKeys})})
		wantError(t, e.Do(apitest.Request{Method: "GET", Path: "/v1/api-keys/current", Key: full}), 401, mailroom.ECodeAPIKeyRevoked)
	})
}
