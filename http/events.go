package http

import (
	"encoding/json"
	"net/http"
	"time"

	"github.com/mailroom/mailroom"
	"github.com/mailroom/mailroom/client/api"
)

// toEventRecord shows an event as GET /v1/events lists it (docs/api.md
// "Webhooks and events"): its data is what a webhook delivery of it
// carries, {} when it has none.
func toEventRecord(e *mailroom.Event) api.EventRecord {
	out := api.EventRecord{ID: e.ID, Type: api.EventType(e.Type), CreatedAt: wireTime(e.CreatedAt), MessageID: e.MessageID,
		Recipient: e.Recipient, Data: e.Data}
	if len(out.Data) == 0 {
		out.Data = json.RawMessage("{}")
	}
	return out
}

// listEvents: GET /v1/events, the account's events newest first, so that
// a consumer that was down can catch up. Its cursors are bound to the
// filters.
func (s *Server) listEvents(w http.ResponseWriter, r *http.Request) {
	f, err := eventFilter(r)
	if err != nil {
		writeError(w, r, err)
		return
	}
	scope := eventsCursorScope(f)
	page, err := pageParams(r, scope)
	if err != nil {
		writeError(w, r, err)
		return
	}
	evs, next, err := s.Webhooks.Events(r.Context(), keyFrom(r.Context()).AccountID, f, page)
	if err != nil {
		writeError(w, r, err)
		return
	}
	out := make([]api.EventRecord, len(evs))
	for i, e := range evs {
		out[i] = toEventRecord(e)
	}
	writeJSON(w, http.StatusOK, newList(out, scope, next))
}

// eventFilter reads and checks ?type=, ?messageId= and ?since=. A value no
// event can have is refused rather than matching nothing, silently.
func eventFilter(r *http.Request) (mailroom.EventFilter, error) {
	if err := onceEach(r, "type", "messageId", "since"); err != nil {
		return mailroom.EventFilter{}, err
	}
	q := r.URL.Query()
	return mailroom.NewEventFilter(q.Get("type"), q.Get("messageId"), q.Get("since"))
}

// eventsCursorScope binds a cursor of GET /v1/events to its filters.
func eventsCursorScope(f mailroom.EventFilter) string {
	scope := "events\x00type=" + f.Type + "\x00messageId=" + f.MessageID
	if f.Since != nil {
		scope += "\x00since=" + f.Since.UTC().Format(time.RFC3339Nano)
	}
	return scope
}

// replayEvent: POST /v1/events/{eventId}/replay queues the event again,
// with its own id, to every enabled endpoint subscribed to its type, or
// to the one ?endpoint= names; 202 with the endpoints.
func (s *Server) replayEvent(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("eventId")
	if !mailroom.IsID(id, mailroom.PrefixEvent) {
		writeError(w, r, mailroom.Errorf(mailroom.ECodeNotFound, "No event %q in this account.", mailroom.Excerpt(id, 64)))
		return
	}
	if err := onceEach(r, "endpoint"); err != nil {
		writeError(w, r, err)
		return
	}
	// An empty ?endpoint= is refused, not read as "every endpoint": a
	// client whose variable came out empty must not broadcast.
	endpoint := r.URL.Query().Get("endpoint")
	if r.URL.Query().Has("endpoint") && !mailroom.IsID(endpoint, mailroom.PrefixWebhook) {
		var v mailroom.Validator
		v.Add("endpoint", "must be a webhook id (wh_ and 26 letters and digits)")
		writeError(w, r, v.Err())
		return
	}
	targets, err := s.Webhooks.Replay(r.Context(), keyFrom(r.Context()).AccountID, id, endpoint)
	if err != nil {
		writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusAccepted, api.ReplayResult{EventID: id, Endpoints: targets})
}
