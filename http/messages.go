package http

import (
	"net/http"
	"time"

	"github.com/mailroom/mailroom"
	"github.com/mailroom/mailroom/client/api"
)

// toMessage shows a message of the email log (docs/api.md "The email
// log"), with its timeline when events are given (the answers about one
// message, which the store cuts to the newest mailroom.MaxTimelineEvents)
// and without it in lists.
func toMessage(m *mailroom.Message, events []*mailroom.Event) api.Message {
	out := api.Message{
		ID: m.ID, Status: api.MessageStatus(m.Status), From: m.From.String(),
		To: formatAddresses(m.To), Cc: formatAddresses(m.Cc), Bcc: formatAddresses(m.Bcc), ReplyTo: formatAddresses(m.ReplyTo),
		Subject: m.Subject, Category: api.Category(m.Category), Tags: m.Tags, Template: toTemplateRef(m.Template),
		CreatedAt: wireTime(m.CreatedAt), ScheduledAt: optWireTime(m.ScheduledAt), RequireTLS: m.RequireTLS,
		Tracking: api.Tracking{Opens: m.Tracking.Opens, Clicks: m.Tracking.Clicks}, Links: toTrackedLinks(m.Links),
	}
	if out.Tags == nil {
		out.Tags = map[string]string{}
	}
	if m.IdempotencyKey != "" {
		out.IdempotencyKey = &m.IdempotencyKey
	}
	out.Recipients = make([]api.Recipient, len(m.Recipients))
	for i, r := range m.Recipients {
		out.Recipients[i] = api.Recipient{
			Address: r.Address, Status: recipientStatus(r.Status), Attempts: r.Attempts,
			LastAttemptAt: optWireTime(r.LastAttemptAt), NextAttemptAt: optWireTime(r.NextAttemptAt),
			SMTPCode: optInt(r.SMTPCode), SMTPResponse: optString(r.SMTPResponse), MX: optString(r.MX),
			Unencrypted: r.Unencrypted, Site: optString(r.Site), LastDeferralReason: optDeferralReason(r.LastDeferralReason),
			TLS: toTLSInfo(r.TLS), Opens: r.Opens, Clicks: r.Clicks,
		}
	}
	for _, e := range events {
		out.Events = append(out.Events, api.MessageEvent{ID: e.ID, Type: api.EventType(e.Type), CreatedAt: wireTime(e.CreatedAt),
			Recipient: e.Recipient, Detail: e.Data})
	}
	if m.OlderEventsCursor != "" {
		// The timeline holds the newest mailroom.MaxTimelineEvents: the
		// rest are GET /v1/events?messageId=…'s, from this cursor on.
		c := bindCursor(eventsCursorScope(mailroom.EventFilter{MessageID: m.ID}), m.OlderEventsCursor)
		out.OlderEventsCursor = &c
	}
	return out
}

// toTrackedLinks shows a click-tracked message's links with their
// clicks (docs/api.md "Engagement tracking"); nil, and left out, when the
// store read none (lists, messages not click-tracked).
func toTrackedLinks(links []mailroom.TrackedLink) []api.TrackedLink {
	if len(links) == 0 {
		return nil
	}
	out := make([]api.TrackedLink, len(links))
	for i, l := range links {
		out[i] = api.TrackedLink{URL: l.URL, Clicks: l.Clicks}
	}
	return out
}

// toTLSInfo shows the TLS of a recipient's last attempt; nil (null) in
// clear text or before any session (docs/api.md "TLS policy").
func toTLSInfo(t *mailroom.TLSInfo) *api.TLSInfo {
	if t == nil {
		return nil
	}
	return &api.TLSInfo{Version: t.Version, Cipher: t.Cipher, Verified: t.Verified, Policy: api.TLSPolicy(t.Policy)}
}

// recipientStatus names a recipient's state as docs/api.md "The email log"
// lists them: a recipient waiting for its message's scheduledAt is queued
// (its nextAttemptAt says until when); scheduled is the message's status.
func recipientStatus(st mailroom.RecipientStatus) api.RecipientStatus {
	if st == mailroom.RecipientScheduled {
		return api.RecipientQueued
	}
	return api.RecipientStatus(st)
}

func formatAddresses(as []mailroom.Address) []string {
	out := make([]string, len(as))
	for i, a := range as {
		out[i] = a.String()
	}
	return out
}

func optInt(n int) *int {
	if n == 0 {
		return nil
	}
	return &n
}

func optDeferralReason(r mailroom.DeferralReason) *api.DeferralReason {
	if r == "" {
		return nil
	}
	out := api.DeferralReason(r)
	return &out
}

func optString(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

// listMessages: GET /v1/messages with the filters of docs/api.md "The email log".
func (s *Server) listMessages(w http.ResponseWriter, r *http.Request) {
	f, err := messageFilter(r)
	if err != nil {
		writeError(w, r, err)
		return
	}
	page, err := pageParams(r, f.CursorScope())
	if err != nil {
		writeError(w, r, err)
		return
	}
	msgs, next, err := s.Store.ListMessages(r.Context(), keyFrom(r.Context()).AccountID, f, page)
	if err != nil {
		writeError(w, r, err)
		return
	}
	writeMessageList(w, msgs, f.CursorScope(), next)
}

// writeMessageList answers a page of messages as the log lists them
// (without their timelines).
func writeMessageList(w http.ResponseWriter, msgs []*mailroom.Message, scope, next string) {
	out := make([]api.Message, len(msgs))
	for i, m := range msgs {
		out[i] = toMessage(m, nil)
	}
	writeJSON(w, http.StatusOK, newList(out, scope, next))
}

// messageFilter reads and checks the log's query parameters.
func messageFilter(r *http.Request) (mailroom.MessageFilter, error) {
	if err := onceEach(r, "status", "category", "to", "from", "since", "until", "template", "event"); err != nil {
		return mailroom.MessageFilter{}, err
	}
	q := r.URL.Query()
	var v mailroom.Validator
	f := mailroom.MessageFilter{Status: mailroom.MessageStatus(q.Get("status")), Category: mailroom.Category(q.Get("category")),
		Template: q.Get("template")}
	if f.Status != "" && !f.Status.Valid() {
		v.Add("status", "not a message status")
	}
	if f.Category != "" && f.Category != mailroom.CategoryTransactional && f.Category != mailroom.CategoryMarketing {
		v.Add("category", "must be transactional or marketing")
	}
	for _, p := range []struct {
		name string
		dst  *string
	}{{"to", &f.To}, {"from", &f.From}} {
		if raw := q.Get(p.name); raw != "" {
			a, err := mailroom.ParseAddress(raw)
			if err != nil {
				v.Add(p.name, "not an email address")
				continue
			}
			*p.dst = a.Address
		}
	}
	if f.Template != "" {
		// A value no template can have would match nothing, silently.
		if msg := mailroom.CheckTemplateRef(f.Template); msg != "" {
			v.Add("template", "must be a template's id (tpl_…) or name: it %s", msg)
		}
	}
	f.Tags = mailroom.ParseTagFilters(&v, "tag", q["tag"])
	f.Event = mailroom.ParseEngagementFilter(&v, "event", q.Get("event"))
	for _, p := range []struct {
		name string
		dst  **time.Time
	}{{"since", &f.Since}, {"until", &f.Until}} {
		if raw := q.Get(p.name); raw != "" {
			t, err := time.Parse(time.RFC3339, raw)
			if err != nil {
				v.Add(p.name, "must be an RFC 3339 time, such as 2026-11-22T10:00:00Z")
				continue
			}
			*p.dst = &t
		}
	}
	return f, v.Err()
}

// getMessage: GET /v1/messages/{messageId}, with recipients and timeline.
func (s *Server) getMessage(w http.ResponseWriter, r *http.Request) {
	m, events, err := s.Store.Message(r.Context(), keyFrom(r.Context()).AccountID, r.PathValue("messageId"))
	if err != nil {
		writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, toMessage(m, events))
}

// getRawMessage: GET /v1/messages/{messageId}/raw, the exact signed bytes
// that were (or will be) sent.
func (s *Server) getRawMessage(w http.ResponseWriter, r *http.Request) {
	raw, err := s.Messages.Raw(r.Context(), keyFrom(r.Context()).AccountID, r.PathValue("messageId"))
	if err != nil {
		writeError(w, r, err)
		return
	}
	w.Header().Set("Content-Type", "message/rfc822")
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(raw)
}
