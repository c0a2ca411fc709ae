package mailroom

import (
	"encoding/json"
	"time"
)

// Event is something that happened to a message or a domain. Events are
// written in the same transaction as the state change they describe: the
// email log's timeline and the webhook outbox are the same rows, so no
// event is ever lost between a change and its webhook (docs/design.md "How a message travels").
type Event struct {
	ID        string // "evt_…", sortable by creation time
	AccountID string
	Type      string
	CreatedAt time.Time
	// MessageID and Recipient place an email event on a message's timeline.
	MessageID string
	Recipient string
	// Data is the event's JSON payload, as webhooks send it in "data".
	Data json.RawMessage
}

// NewEvent makes an event of type typ with data marshalled to JSON.
func NewEvent(accountID, typ string, data any, now time.Time) (*Event, error) {
	raw, err := json.Marshal(data)
	if err != nil {
		return nil, err
	}
	return &Event{ID: NewID(PrefixEvent, now), AccountID: accountID, Type: typ, CreatedAt: now.UTC(), Data: raw}, nil
}
