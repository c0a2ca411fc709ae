package mailroom

import (
	"github.com/go-json-experiment/json/jsontext"
)

// Limits of a batch (docs/api.md "Limits").
const (
	// MaxBatchMessages is the most messages one batch holds.
	MaxBatchMessages = 500
	// MaxBatchContentBytes bounds the bodies and attachments of a batch's
	// accepted messages together, as rendered: as much as a request body
	// may hold. Templates could otherwise make a small request into
	// gigabytes, held in memory and written in one transaction.
	MaxBatchContentBytes = 16 << 20
)

// ContentBytes is what a message counts against MaxBatchContentBytes.
func (m *Message) ContentBytes() int {
	n := len(m.HTML) + len(m.Text)
	for _, a := range m.Attachments {
		n += len(a.Content)
	}
	return n
}

// BatchTooLarge is the error of an item that would take its batch past
// MaxBatchContentBytes.
func BatchTooLarge(m *Message) error {
	field := "html"
	if m.Template != nil {
		field = "template"
	}
	var v Validator
	v.Add(field, "would bring this batch's messages past %d MiB of bodies and attachments, as rendered; send it in another batch", MaxBatchContentBytes>>20)
	return v.Err()
}

// SendBatchRequest is the body of POST /v1/send/batch (docs/api.md "Batch
// sends"): its envelope, and each item as its JSON text, which is decoded on
// its own, so that an item with an unknown field or a wrong type fails
// alone, not the batch. The HTTP layer stops reading items at the first
// past MaxBatchMessages.
type SendBatchRequest struct {
	Messages []jsontext.Value
}

// Validate checks the envelope: the items are checked one by one, as sends.
// idempotencyHeader holds the Idempotency-Key header's values: a batch has
// no key of its own, for one key cannot say which of its messages it keys.
func (r *SendBatchRequest) Validate(idempotencyHeader []string) error {
	var v Validator
	switch n := len(r.Messages); {
	case n == 0:
		v.Add("messages", "is required: give 1 to %d send requests, as for POST /v1/send", MaxBatchMessages)
	case n > MaxBatchMessages:
		v.Add("messages", "has more than %d items; a batch holds 1 to %d messages", MaxBatchMessages, MaxBatchMessages)
	}
	if len(idempotencyHeader) > 0 {
		v.Add("Idempotency-Key", "is not taken on a batch, as it cannot say which message it keys: give each message its own idempotencyKey")
	}
	return v.Err()
}
