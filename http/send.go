package http

import (
	"net/http"

	"github.com/mailroom/mailroom"
)

type sendResponse struct {
	Status    string `json:"status"`
	MessageID string `json:"messageId"`
}

// send: POST /v1/send. A 200 means the message is committed to storage.
func (s *Server) send(w http.ResponseWriter, r *http.Request) {
	var req mailroom.SendRequest
	if err := decodeJSON(r, &req); err != nil {
		writeError(w, r, err)
		return
	}
	res, err := s.Sender.Send(r.Context(), keyFrom(r.Context()).AccountID, &req, r.Header.Values("Idempotency-Key"))
	if err != nil {
		writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, toSendResponse(res))
}

// toSendResponse says "duplicate" for a retry of an accepted request,
// "scheduled" for a send in the future, "queued" otherwise (a message
// whose recipients are all suppressed was accepted too: the log says so).
func toSendResponse(res mailroom.AcceptResult) sendResponse {
	status := "queued"
	switch {
	case res.Duplicate:
		status = "duplicate"
	case res.Status == mailroom.MessageScheduled:
		status = "scheduled"
	}
	return sendResponse{Status: status, MessageID: res.MessageID}
}
