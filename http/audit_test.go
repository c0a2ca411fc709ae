package http_test

import (
	"net/url"
	"slices"
	"testing"

	"github.com/mailroom/mailroom"
	"github.com/mailroom/mailroom/apitest"
	"github.com/mailroom/mailroom/client/api"
	"github.com/mailroom/mailroom/storetest"
)

// auditLog lists the whole audit log that key sees with the query q,
// newest first, and checks that each page is the API's shape.
func (e *env) auditLog(t *testing.T, key, q string) []api.AuditEntry {
	t.Helper()
	r := e.Do(apitest.Request{Method: "GET", Path: "/v1/audit-log?limit=100&" + q, Key: key})
	if r.Status != 200 {
		t.Fatalf("GET /v1/audit-log?%s: %d %s", q, r.Status, r.Body)
	}
	return apitest.Decode[api.List[api.AuditEntry]](r).Data
}

func auditActions(entries []api.AuditEntry) []api.AuditAction {
	var out []api.AuditAction
	for _, e := range entries {
		out = append(out, e.Action)
	}
	return out
}

// TestAuditLog: changes through the API are in GET /v1/audit-log with the
// key, the request id and the client address, newest first; refused
// requests, no-ops and reads are not; filters, paging and the keys scope
// hold, and an account sees its own entries only.
func TestAuditLog(t *testing.T) {
	storetest.Each(t, func(t *testing.T, eng storetest.Engine) {
		e := newEnv(t, eng)
		adminID, _, _ := mailroom.ParseAPIKey(e.admin)
		// The entries the environment made before (the account, its admin
		// key, from the test's own storage calls: the system's).
		before := len(e.auditLog(t, e.admin, ""))

		r := e.Do(apitest.Request{Method: "POST", Path: "/v1/api-keys", Key: e.admin,
			Header: map[string]string{"X-Request-Id": "req-audit-1"},
			Body:   map[string]any{"name": "deploys", "scopes": []string{"send"}}})
		if r.Status != 201 {
			t.Fatalf("create key: %d %s", r.Status, r.Body)
		}
		sendKey := apitest.Decode[api.APIKeyCreated](r)
		e.verifiedDomain(t, "example.com")
		r = e.Do(apitest.Request{Method: "PATCH", Path: "/v1/domains/example.com", Key: e.admin, Body: map[string]any{"tls": "enforced"}})
		if r.Status != 200 {
			t.Fatalf("patch domain: %d %s", r.Status, r.Body)
		}
		patchRequestID := r.Header.Get("X-Request-Id")
		for range 2 { // the second revocation changes nothing
			if r := e.Do(apitest.Request{Method: "DELETE", Path: "/v1/api-keys/" + sendKey.KeyID, Key: e.admin}); r.Status != 200 {
				t.Fatalf("revoke: %d %s", r.Status, r.Body)
			}
		}
		// Refused and no-op requests and reads record nothing.
		wantError(t, e.Do(apitest.Request{Method: "POST", Path: "/v1/domains", Key: e.admin, Body: map[string]any{"name": "not a domain"}}),
			400, mailroom.ECodeValidation)
		wantError(t, e.Do(apitest.Request{Method: "DELETE", Path: "/v1/suppressions/nobody@example.com", Key: e.admin}), 404, mailroom.ECodeNotFound)
		wantError(t, e.Do(apitest.Request{Method: "DELETE", Path: "/v1/domains/nosuch.example", Key: e.admin}), 404, mailroom.ECodeNotFound)
		e.Do(apitest.Request{Method: "GET", Path: "/v1/domains/example.com", Key: e.admin})

		all := e.auditLog(t, e.admin, "")
		got := auditActions(all[:len(all)-before])
		want := []api.AuditAction{api.AuditAPIKeyRevoked, api.AuditDomainUpdated, api.AuditDomainVerified, api.AuditDomainCreated, api.AuditAPIKeyCreated}
		if !slices.Equal(got, want) {
			t.Fatalf("audit log (newest first) %v, want %v", got, want)
		}
		for _, a := range all[:len(all)-before] {
			if a.Actor != (api.AuditActor{Type: api.AuditByAPIKey, KeyID: adminID}) || a.IP == nil || *a.IP != "127.0.0.1" || a.RequestID == nil {
				t.Errorf("%s: actor %+v ip %v request %v, want the admin key from 127.0.0.1", a.Action, a.Actor, a.IP, a.RequestID)
			}
		}
		created, updated := all[4], all[1]
		if *created.RequestID != "req-audit-1" || created.Target != (api.AuditTarget{Type: "api_key", ID: sendKey.KeyID}) {
			t.Errorf("api_key.created: %+v", created)
		}
		if *updated.RequestID != patchRequestID {
			t.Errorf("domain.updated request id %s, want the response's %s", *updated.RequestID, patchRequestID)
		}
		if c := updated.Changes["tls"]; c != [2]any{"opportunistic", "enforced"} {
			t.Errorf("domain.updated changes %v", updated.Changes)
		}
		if c := all[2].Changes["status"]; c != [2]any{"pending", "verified"} {
			t.Errorf("domain.verified changes %v", all[2].Changes)
		}
		if c := created.Changes["name"]; c != [2]any{nil, "deploys"} {
			t.Errorf("api_key.created changes %v", created.Changes)
		}

		// Filters.
		if got := e.auditLog(t, e.admin, "action=domain.created"); len(got) != 1 || got[0].Action != api.AuditDomainCreated {
			t.Errorf("action filter: %v", auditActions(got))
		}
		if got := e.auditLog(t, e.admin, "keyId="+adminID); len(got) != 5 {
			t.Errorf("keyId filter: %v", auditActions(got))
		}
		if got := e.auditLog(t, e.admin, "keyId="+sendKey.KeyID); len(got) != 0 {
			t.Errorf("keyId of a key that changed nothing: %v", auditActions(got))
		}
		future, past := "2100-01-01T00:00:00Z", "2000-01-01T00:00:00Z"
		if got := e.auditLog(t, e.admin, "since="+future); len(got) != 0 {
			t.Errorf("since the future: %v", auditActions(got))
		}
		if got := e.auditLog(t, e.admin, "since="+past+"&until="+future); len(got) != len(all) {
			t.Errorf("since the past until the future: %d of %d", len(got), len(all))
		}

		// Paging, newest first, each entry once; a cursor is its filters'.
		var paged []string
		path := "/v1/audit-log?limit=2"
		for path != "" {
			r := e.Do(apitest.Request{Method: "GET", Path: path, Key: e.admin})
			page := apitest.Decode[api.List[api.AuditEntry]](r)
			for _, a := range page.Data {
				paged = append(paged, a.ID)
			}
			path = ""
			if page.NextCursor != nil {
				path = "/v1/audit-log?limit=2&cursor=" + url.QueryEscape(*page.NextCursor)
			}
		}
		var ids []string
		for _, a := range all {
			ids = append(ids, a.ID)
		}
		if !slices.Equal(paged, ids) {
			t.Errorf("paged %v, want %v", paged, ids)
		}
		first := apitest.Decode[api.List[api.AuditEntry]](e.Do(apitest.Request{Method: "GET", Path: "/v1/audit-log?limit=1", Key: e.admin}))
		wantError(t, e.Do(apitest.Request{Method: "GET", Path: "/v1/audit-log?action=domain.created&cursor=" + url.QueryEscape(*first.NextCursor), Key: e.admin}),
			400, mailroom.ECodeValidation)

		// Bad filters are refused, not an empty list.
		for _, bad := range []string{"action=domain.exploded", "since=yesterday", "until=2026-13-01T00:00:00Z",
			"since=" + future + "&until=" + past, "action=a&action=b"} {
			wantError(t, e.Do(apitest.Request{Method: "GET", Path: "/v1/audit-log?" + bad, Key: e.admin}), 400, mailroom.ECodeValidation)
		}
		// The keys scope.
		sender := e.newKey(t, e.acct, mailroom.Scopes{mailroom.ScopeSend, mailroom.ScopeDomains, mailroom.ScopeWebhooks, mailroom.ScopeTemplates})
		wantError(t, e.Do(apitest.Request{Method: "GET", Path: "/v1/audit-log", Key: sender}), 403, mailroom.ECodeInsufficientScope)

		// Another account sees its own entries only.
		other := storetest.NewAccount(t, e.store, "globex")
		otherAdmin := e.newKey(t, other, mailroom.Scopes{mailroom.ScopeKeys})
		for _, a := range e.auditLog(t, otherAdmin, "") {
			if slices.Contains(ids, a.ID) {
				t.Fatalf("another account sees %s", a.ID)
			}
		}
		if got := e.auditLog(t, otherAdmin, ""); len(got) != 2 { // its account and its key, the system's
			t.Errorf("the other account's log: %v", auditActions(got))
		}
	})
}
