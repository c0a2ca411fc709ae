package http

import (
	"net/http"

	"github.com/mailroom/mailroom"
	"github.com/mailroom/mailroom/client/api"
)

// send: POST /v1/send. A 200 means the message is committed to storage.
func (s *Server) send(w http.ResponseWriter, r *http.Request) {
	var req mailroom.SendRequest
	if err := decodeJSON(r, &req); err != nil {
		writeError(w, r, err)
		return
	}
	res, err := s.Sender.Send(r.Context(), keyFrom(r.Context()), &req, r.Header.Values("Idempotency-Key"))
	if err != nil {
		writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, toSendResult(res))
}

// toSendResult says "duplicate" for a retry of an accepted request,
// "scheduled" for a send in the future, "queued" otherwise (a message
// whose recipients are all suppressed was accepted too: the log says so).
func toSendResult(res mailroom.AcceptResult) api.SendResult {
	status := api.SendQueued
	switch {
	case res.Duplicate:
		status = api.SendDuplicate
	case res.Status == mailroom.MessageScheduled:
		status = api.SendScheduled
	}
	return api.SendResult{Status: status, MessageID: res.MessageID}
}
