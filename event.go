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
	// Data is the event's JSON payload, as webhooks send it in "data":
	// what NewEvent made, or what storage gives back.
	Data json.RawMessage
	// Email is an email event's data, typed, as NewEmailEvent makes it:
	// such an event is written with no JSON made first (storage keeps its
	// detail alone, sqlstore/eventdata.go), and Data stays nil until the
	// event is read back. Where Email is set it is the event's data, and
	// Data is not read. Nil on every other event and on events read from
	// storage.
	Email *EmailEventData
}

// NewEvent makes an event of type typ with data marshalled to JSON.
func NewEvent(accountID, typ string, data any, now time.Time) (*Event, error) {
	raw, err := json.Marshal(data)
	if err != nil {
		return nil, err
	}
	return &Event{ID: NewID(PrefixEvent, now), AccountID: accountID, Type: typ, CreatedAt: now.UTC(), Data: raw}, nil
}
