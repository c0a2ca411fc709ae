package http

import (
	"net/http"
	"strconv"
	"time"

	"github.com/mailroom/mailroom"
	"github.com/mailroom/mailroom/client/api"
	"github.com/mailroom/mailroom/receiving"
)

// The received-mail routes (docs/api.md "Receiving mail"), scope receive:
// the mail the account's receiving domains took, read through the
// receiving package's Mailbox.

// listReceived: GET /v1/received, newest first, with filters to, from,
// since and until; its cursors are bound to the filters.
func (s *Server) listReceived(w http.ResponseWriter, r *http.Request) {
	if err := onceEach(r, "to", "from", "since", "until"); err != nil {
		writeError(w, r, err)
		return
	}
	q := r.URL.Query()
	f, err := receiving.NewFilter(q.Get("to"), q.Get("from"), q.Get("since"), q.Get("until"))
	if err != nil {
		writeError(w, r, err)
		return
	}
	scope := receivedCursorScope(f)
	page, err := pageParams(r, scope)
	if err != nil {
		writeError(w, r, err)
		return
	}
	msgs, next, err := s.Received.List(r.Context(), keyFrom(r.Context()).AccountID, f, page)
	if err != nil {
		writeError(w, r, err)
		return
	}
	out := make([]api.ReceivedSummary, len(msgs))
	for i, m := range msgs {
		out[i] = toReceivedSummary(m)
	}
	writeJSON(w, http.StatusOK, newList(out, scope, next))
}

// receivedCursorScope binds a cursor of GET /v1/received to its filters.
func receivedCursorScope(f mailroom.ReceivedFilter) string {
	scope := "received\x00to=" + f.To + "\x00from=" + f.From
	for _, t := range []struct {
		name string
		at   time.Time
	}{{"since", f.Since}, {"until", f.Until}} {
		if !t.at.IsZero() {
			scope += "\x00" + t.name + "=" + t.at.UTC().Format(time.RFC3339Nano)
		}
	}
	return scope
}

// getReceived: GET /v1/received/{id}, one message parsed.
func (s *Server) getReceived(w http.ResponseWriter, r *http.Request) {
	m, err := s.Received.Message(r.Context(), keyFrom(r.Context()).AccountID, r.PathValue("id"))
	if err != nil {
		writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, toReceivedMessage(m))
}

// getReceivedRaw: GET /v1/received/{id}/raw, the stored bytes as
// message/rfc822 (RFC 2046 §5.2.1).
func (s *Server) getReceivedRaw(w http.ResponseWriter, r *http.Request) {
	raw, err := s.Received.Raw(r.Context(), keyFrom(r.Context()).AccountID, r.PathValue("id"))
	if err != nil {
		writeError(w, r, err)
		return
	}
	w.Header().Set("Content-Type", "message/rfc822")
	w.Header().Set("Content-Length", strconv.Itoa(len(raw)))
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(raw)
}

// getReceivedAttachment: GET /v1/received/{id}/attachments/{attachmentId},
// the decoded bytes as a download (attachmentheaders.go says how it is
// kept from being rendered).
func (s *Server) getReceivedAttachment(w http.ResponseWriter, r *http.Request) {
	a, err := s.Received.Attachment(r.Context(), keyFrom(r.Context()).AccountID, r.PathValue("id"), r.PathValue("attachmentId"))
	if err != nil {
		writeError(w, r, err)
		return
	}
	setDownloadHeaders(w.Header(), a.ContentType, a.Filename)
	w.Header().Set("Content-Length", strconv.Itoa(len(a.Content)))
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(a.Content)
}
