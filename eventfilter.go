package mailroom

import (
	"strings"
	"time"
)

// NewEventFilter reads the filters of GET /v1/events as the query gives
// them ("" for absent). A value no event can have (an unknown type, a
// malformed message id, a time that is not RFC 3339) is refused rather
// than matching nothing, silently.
func NewEventFilter(typ, messageID, since string) (EventFilter, error) {
	f := EventFilter{Type: typ, MessageID: messageID}
	var v Validator
	if typ != "" && !IsEventType(typ) {
		v.Add("type", "%q is not an event type; the types are %s", typ, OwnText(strings.Join(EventTypes, ", ")))
	}
	if messageID != "" && !IsID(messageID, PrefixMessage) {
		v.Add("messageId", "must be a message id (msg_ and 26 letters and digits)")
	}
	if since != "" {
		t, err := time.Parse(time.RFC3339, since)
		if err != nil {
			v.Add("since", "must be an RFC 3339 time, such as 2026-11-22T10:00:00Z")
		} else {
			f.Since = &t
		}
	}
	return f, v.Err()
}
