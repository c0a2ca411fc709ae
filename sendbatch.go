package mailroom

import (
	"github.com/go-json-experiment/json/jsontext"
)

// MaxBatchMessages is the most messages one batch holds (docs/api.md "Limits").
const MaxBatchMessages = 500

// SendBatchRequest is the body of POST /v1/send/batch (docs/api.md "Batch
// sends"): only its envelope. Each item is kept as its JSON text and
// decoded on its own, so that an item with an unknown field or a wrong
// type fails alone, not the batch.
type SendBatchRequest struct {
	Messages BatchMessages `json:"messages"`
}

// BatchMessages is the messages field: at most MaxBatchMessages items.
type BatchMessages []jsontext.Value

// UnmarshalJSONFrom reads the items' JSON texts and refuses the
// (MaxBatchMessages+1)th before reading it: a 16 MiB body of tiny items
// costs 501 items, not millions.
func (l *BatchMessages) UnmarshalJSONFrom(dec *jsontext.Decoder) error {
	list, err := decodeArray[jsontext.Value](dec, MaxBatchMessages, 0, func() error {
		return validationError("messages", "has more than %d items; a batch holds 1 to %d messages", MaxBatchMessages, MaxBatchMessages)
	})
	*l = list
	return err
}

// Validate checks the envelope: the items are checked one by one, as sends.
// idempotencyHeader holds the Idempotency-Key header's values: a batch has
// no key of its own, for one key cannot say which of its messages it keys.
func (r *SendBatchRequest) Validate(idempotencyHeader []string) error {
	var v Validator
	if len(r.Messages) == 0 {
		v.Add("messages", "is required: give 1 to %d send requests, as for POST /v1/send", MaxBatchMessages)
	}
	if len(idempotencyHeader) > 0 {
		v.Add("Idempotency-Key", "is not taken on a batch, as it cannot say which message it keys: give each message its own idempotencyKey")
	}
	return v.Err()
}
