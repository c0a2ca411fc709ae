package http

import (
	"net/http"
	"slices"

	"github.com/mailroom/mailroom/resend"
	"github.com/mailroom/mailroom/send"
)

// resendGetEmail: GET /emails/{id}, the message as the log shows it with
// the bodies and Message-ID it was accepted with.
func (s *Server) resendGetEmail(w http.ResponseWriter, r *http.Request) {
	m, err := s.Store.MessageContent(r.Context(), keyFrom(r.Context()).AccountID, r.PathValue("id"))
	if err != nil {
		writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, resend.ToRetrievedEmail(m))
}

// resendListEmails: GET /emails, the email log newest first, paged by
// Resend's cursors (the ids it lists): after gives the older page, before
// the page just newer, which the log reads oldest first.
func (s *Server) resendListEmails(w http.ResponseWriter, r *http.Request) {
	win, err := resend.ParseListWindow(r.URL.Query(), resend.DefaultListLimit)
	if err != nil {
		writeError(w, r, err)
		return
	}
	f, page, err := resend.EmailListQuery(win)
	if err != nil {
		writeError(w, r, err)
		return
	}
	msgs, next, err := s.Store.ListMessages(r.Context(), keyFrom(r.Context()).AccountID, f, page)
	if err != nil {
		writeError(w, r, err)
		return
	}
	if f.OldestFirst {
		slices.Reverse(msgs)
	}
	writeJSON(w, http.StatusOK, resend.ToEmailList(msgs, next != ""))
}

// resendEmailUpdate is PATCH /emails/{id}'s body; Resend's SDKs send the
// id in it too, which the path already gives.
type resendEmailUpdate struct {
	ScheduledAt *string `json:"scheduled_at"`
}

// resendUpdateEmail: PATCH /emails/{id} {scheduled_at}, a reschedule
// through the service of PATCH /v1/scheduled/{messageId}.
func (s *Server) resendUpdateEmail(w http.ResponseWriter, r *http.Request) {
	var body resendEmailUpdate
	if err := decodeResendJSON(r, &body); err != nil {
		writeError(w, r, err)
		return
	}
	req := send.RescheduleRequest{}
	if body.ScheduledAt != nil && *body.ScheduledAt != "" { // null and "" are absent
		at, err := resend.ScheduledAt(*body.ScheduledAt, s.now())
		if err != nil {
			writeError(w, r, err)
			return
		}
		req.ScheduledAt = &at
	}
	id := r.PathValue("id")
	if _, _, err := s.Scheduled.Reschedule(r.Context(), keyFrom(r.Context()).AccountID, id, &req); err != nil {
		writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, resend.NewEmailRef(id))
}

// resendCancelEmail: POST /emails/{id}/cancel, through the service of
// DELETE /v1/scheduled/{messageId}. It has no body; an empty one with
// Content-Type: application/json is what the SDKs send.
func (s *Server) resendCancelEmail(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	if _, _, err := s.Scheduled.Cancel(r.Context(), keyFrom(r.Context()).AccountID, id); err != nil {
		writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, resend.NewEmailRef(id))
}
