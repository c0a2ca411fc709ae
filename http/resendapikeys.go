package http

import (
	"context"
	"net/http"

	"github.com/mailroom/mailroom"
	"github.com/mailroom/mailroom/apikey"
	"github.com/mailroom/mailroom/resend"
)

// Resend's API key routes (docs/api.md "Moving from Resend";
// https://resend.com/docs/api-reference/api-keys) over apikey.Service, as
// /v1/api-keys. Resend deletes a key where Mailroom revokes it: a revoked
// key is gone from these routes (listed no more, deleted again: 404),
// and /v1/api-keys still shows it, revoked.

// resendAPIKeyFields names a create's fields as Resend's body does.
var resendAPIKeyFields = apikey.Fields{Name: "name", Scopes: "permission", Domain: "domain_id"}

// resendCreateAPIKey: POST /api-keys {name, permission?, domain_id?} →
// {id, token}.
func (s *Server) resendCreateAPIKey(w http.ResponseWriter, r *http.Request) {
	var req resend.CreateAPIKeyRequest
	if err := decodeResendJSON(r, &req); err != nil {
		writeError(w, r, err)
		return
	}
	name, scopes, domain, err := req.NewKey()
	if err != nil {
		writeError(w, r, err)
		return
	}
	full, key, err := s.Keys.Create(r.Context(), keyFrom(r.Context()).AccountID,
		apikey.NewKey{Name: name, Scopes: scopes, Domain: domain}, resendAPIKeyFields)
	if err != nil {
		writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, resend.CreatedAPIKey{ID: key.KeyID, Token: full})
}

// resendListAPIKeys: GET /api-keys, the account's keys that are not
// revoked, newest first, never a token.
func (s *Server) resendListAPIKeys(w http.ResponseWriter, r *http.Request) {
	win, err := resend.ParseListWindow(r.URL.Query(), 0)
	if err != nil {
		writeError(w, r, err)
		return
	}
	accountID := keyFrom(r.Context()).AccountID
	all, truncated, err := readWhole(r.Context(), func(ctx context.Context, p mailroom.Page) ([]*mailroom.APIKey, string, error) {
		return s.Keys.List(ctx, accountID, p)
	})
	if err != nil {
		writeError(w, r, err)
		return
	}
	live := all[:0]
	for _, k := range all {
		if k.RevokedAt == nil {
			live = append(live, k)
		}
	}
	page, more, err := resend.Select(win, live, func(k *mailroom.APIKey) string { return k.KeyID })
	if err != nil {
		writeError(w, r, err)
		return
	}
	out := resend.APIKeyList{Object: "list", HasMore: more || (truncated && win.Before == ""), Data: make([]resend.APIKey, len(page))}
	for i, k := range page {
		out.Data[i] = resend.ToAPIKey(k)
	}
	writeJSON(w, http.StatusOK, out)
}

// resendDeleteAPIKey: DELETE /api-keys/{id} revokes the key: it fails
// from the next request on.
func (s *Server) resendDeleteAPIKey(w http.ResponseWriter, r *http.Request) {
	accountID := keyFrom(r.Context()).AccountID
	key, err := s.Keys.Get(r.Context(), accountID, r.PathValue("id"))
	if err == nil && key.RevokedAt != nil {
		err = mailroom.Errorf(mailroom.ECodeNotFound, "No API key %q in this account.", key.KeyID)
	}
	if err != nil {
		writeError(w, r, err)
		return
	}
	if _, err := s.Keys.Revoke(r.Context(), accountID, key.KeyID); err != nil {
		writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, resend.DeletedAPIKey{Object: "api_key", ID: key.KeyID, Deleted: true})
}
