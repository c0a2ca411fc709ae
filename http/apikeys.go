package http

import (
	"net/http"

	"github.com/mailroom/mailroom"
	"github.com/mailroom/mailroom/apikey"
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
		Domain:     optString(k.Domain),
	}
}

// createAPIKeyRequest is api.APIKeyCreateRequest as the service reads it:
// its scopes are mailroom.ScopeNames, which refuses a list longer than
// the scopes there are while decoding it. Domain (optional) restricts the
// key to sending from that one domain of the account, named by its name
// or its id (apikey.NewKey.Domain).
type createAPIKeyRequest struct {
	Name   string              `json:"name"`
	Scopes mailroom.ScopeNames `json:"scopes"`
	Domain string              `json:"domain"`
}

// createAPIKey: POST /v1/api-keys. The full key is in this answer only.
func (s *Server) createAPIKey(w http.ResponseWriter, r *http.Request) {
	var req createAPIKeyRequest
	if err := decodeJSON(r, &req); err != nil {
		writeError(w, r, err)
		return
	}
	full, key, err := s.Keys.Create(r.Context(), keyFrom(r.Context()).AccountID,
		apikey.NewKey{Name: req.Name, Scopes: req.Scopes, Domain: req.Domain}, apikey.APIFields)
	if err != nil {
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
	keys, next, err := s.Keys.List(r.Context(), keyFrom(r.Context()).AccountID, page)
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
	key, err := s.Keys.Get(r.Context(), keyFrom(r.Context()).AccountID, r.PathValue("keyId"))
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
	accountID := keyFrom(r.Context()).AccountID
	key, err := s.Keys.Get(r.Context(), accountID, r.PathValue("keyId"))
	if err != nil {
		writeError(w, r, err)
		return
	}
	key, err = s.Keys.Revoke(r.Context(), accountID, key.KeyID)
	if err != nil {
		writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, toAPIKey(key))
}
