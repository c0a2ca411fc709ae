package mailroom

import (
	"github.com/go-json-experiment/json/jsontext"
)

// MaxBatchMessages is the most messages one batch holds (docs/api.md "Limits").
const MaxBatchMessages = 500

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
