package http

import (
	"net/http"

	"github.com/mailroom/mailroom"
	"github.com/mailroom/mailroom/client/api"
)

// toAPIKey shows an API key as the API does: never its secret, which only
// the answer to its creation holds (api.APIKeyCreated).
func toAPIKey(k *mailroom.APIKey) api.APIKey {
	scopes := make([]api.Scope, len(k.Scopes))
	for i, s := range k.Scopes {
		scopes[i] = api.Scope(s)
	}
	return api.APIKey{
		KeyID:      k.KeyID,
		Name:       k.Name,
		Scopes:     scopes,
		Status:     api.KeyStatus(k.Status()),
		CreatedAt:  wireTime(k.CreatedAt),
		LastUsedAt: optWireTime(k.LastUsedAt),
		RevokedAt:  optWireTime(k.RevokedAt),
	}
}

// createAPIKeyRequest is api.APIKeyCreateRequest as the service reads it:
// its scopes are mailroom.ScopeNames, which refuses a list longer than
// the scopes there are while decoding it.
type createAPIKeyRequest struct {
	Name   string              `json:"name"`
	Scopes mailroom.ScopeNames `json:"scopes"`
}

// createAPIKey: POST /v1/api-keys. The full key is in this answer only.
func (s *Server) createAPIKey(w http.ResponseWriter, r *http.Request) {
	var req createAPIKeyRequest
	if err := decodeJSON(r, &req); err != nil {
		writeError(w, r, err)
		return
	}
	var v mailroom.Validator
	mailroom.ValidateKeyName(&v, "name", req.Name)
	scopes := mailroom.ParseScopes(&v, "scopes", req.Scopes)
	if err := v.Err(); err != nil {
		writeError(w, r, err)
		return
	}
	caller := keyFrom(r.Context())
	full, key := mailroom.NewAPIKey(caller.AccountID, req.Name, scopes, s.now())
	if err := s.Store.CreateAPIKey(r.Context(), key); err != nil {
		writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusCreated, api.APIKeyCreated{APIKey: toAPIKey(key), Key: full})
}

// listAPIKeys: GET /v1/api-keys, newest first.
func (s *Server) listAPIKeys(w http.ResponseWriter, r *http.Request) {
	page, err := pageParams(r, scopeAPIKeys)
	if err != nil {
		writeError(w, r, err)
		return
	}
	keys, next, err := s.Store.ListAPIKeys(r.Context(), keyFrom(r.Context()).AccountID, page)
	if err != nil {
		writeError(w, r, err)
		return
	}
	out := make([]api.APIKey, len(keys))
	for i, k := range keys {
		out[i] = toAPIKey(k)
	}
	writeJSON(w, http.StatusOK, newList(out, scopeAPIKeys, next))
}

// getAPIKey: GET /v1/api-keys/{keyId}.
func (s *Server) getAPIKey(w http.ResponseWriter, r *http.Request) {
	key, err := s.accountKey(r)
	if err != nil {
		writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, toAPIKey(key))
}

// currentAPIKey: GET /v1/api-keys/current, the calling key as it was
// authenticated for this request.
func (s *Server) currentAPIKey(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, toAPIKey(keyFrom(r.Context())))
}

// revokeAPIKey: DELETE /v1/api-keys/{keyId}. The key fails from the next
// request on; mail it already sent stays accepted.
func (s *Server) revokeAPIKey(w http.ResponseWriter, r *http.Request) {
	key, err := s.accountKey(r)
	if err != nil {
		writeError(w, r, err)
		return
	}
	key, err = s.Store.RevokeAPIKey(r.Context(), key.AccountID, key.KeyID, s.now())
	if err != nil {
		writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, toAPIKey(key))
}

// accountKey finds the {keyId} of the path among the caller's account's
// keys. Another account's key is not_found, never forbidden, so ids
// cannot be probed.
func (s *Server) accountKey(r *http.Request) (*mailroom.APIKey, error) {
	id := r.PathValue("keyId")
	notFound := mailroom.Errorf(mailroom.ECodeNotFound, "No API key %q in this account.", id)
	if !mailroom.ValidKeyID(id) {
		return nil, notFound
	}
	key, err := s.Store.APIKey(r.Context(), id)
	if mailroom.IsCode(err, mailroom.ECodeNotFound) || (err == nil && key.AccountID != keyFrom(r.Context()).AccountID) {
		return nil, notFound
	}
	return key, err
}
