package http

import (
	"net/http"

	"github.com/mailroom/mailroom/send"
)

// listScheduled: GET /v1/scheduled, soonest first.
func (s *Server) listScheduled(w http.ResponseWriter, r *http.Request) {
	page, err := pageParams(r, scopeScheduled)
	if err != nil {
		writeError(w, r, err)
		return
	}
	msgs, next, err := s.Scheduled.List(r.Context(), keyFrom(r.Context()).AccountID, page)
	if err != nil {
		writeError(w, r, err)
		return
	}
	writeMessageList(w, msgs, scopeScheduled, next)
}

// rescheduleMessage: PATCH /v1/scheduled/{messageId} with {scheduledAt}.
func (s *Server) rescheduleMessage(w http.ResponseWriter, r *http.Request) {
	var req send.RescheduleRequest
	if err := decodeJSON(r, &req); err != nil {
		writeError(w, r, err)
		return
	}
	m, events, err := s.Scheduled.Reschedule(r.Context(), keyFrom(r.Context()).AccountID, r.PathValue("messageId"), &req)
	if err != nil {
		writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, toMessage(m, events))
}

// cancelMessage: DELETE /v1/scheduled/{messageId}.
func (s *Server) cancelMessage(w http.ResponseWriter, r *http.Request) {
	m, events, err := s.Scheduled.Cancel(r.Context(), keyFrom(r.Context()).AccountID, r.PathValue("messageId"))
	if err != nil {
		writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, toMessage(m, events))
}
