package http

import (
	"net/http"

	"github.com/mailroom/mailroom"
	"github.com/mailroom/mailroom/client/api"
)

// toSuppression shows an entry of the suppression list: its message id
// null for a manual entry.
func toSuppression(s *mailroom.Suppression) api.Suppression {
	return api.Suppression{Address: s.Address, Reason: api.SuppressionReason(s.Reason), CreatedAt: wireTime(s.CreatedAt), MessageID: optString(s.MessageID)}
}

// addSuppression: POST /v1/suppressions. 201 when added, 200 with the
// existing entry when the address was suppressed already: the service
// decides which.
func (s *Server) addSuppression(w http.ResponseWriter, r *http.Request) {
	var req api.SuppressionRequest
	if err := decodeJSON(r, &req); err != nil {
		writeError(w, r, err)
		return
	}
	sup, created, err := s.Suppressions.Add(r.Context(), keyFrom(r.Context()).AccountID, req.Address)
	if err != nil {
		writeError(w, r, err)
		return
	}
	status := http.StatusOK
	if created {
		status = http.StatusCreated
	}
	writeJSON(w, status, toSuppression(sup))
}

// listSuppressions: GET /v1/suppressions, newest first.
func (s *Server) listSuppressions(w http.ResponseWriter, r *http.Request) {
	page, err := pageParams(r, scopeSuppressions)
	if err != nil {
		writeError(w, r, err)
		return
	}
	list, next, err := s.Suppressions.List(r.Context(), keyFrom(r.Context()).AccountID, page)
	if err != nil {
		writeError(w, r, err)
		return
	}
	out := make([]api.Suppression, len(list))
	for i, x := range list {
		out[i] = toSuppression(x)
	}
	writeJSON(w, http.StatusOK, newList(out, scopeSuppressions, next))
}

// getSuppression: GET /v1/suppressions/{address}.
func (s *Server) getSuppression(w http.ResponseWriter, r *http.Request) {
	sup, err := s.Suppressions.Get(r.Context(), keyFrom(r.Context()).AccountID, r.PathValue("address"))
	if err != nil {
		writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, toSuppression(sup))
}

// deleteSuppression: DELETE /v1/suppressions/{address}: mail to it is
// attempted again.
func (s *Server) deleteSuppression(w http.ResponseWriter, r *http.Request) {
	if err := s.Suppressions.Delete(r.Context(), keyFrom(r.Context()).AccountID, r.PathValue("address")); err != nil {
		writeError(w, r, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}
