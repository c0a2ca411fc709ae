package client

import "github.com/mailroom/mailroom/client/api"

// BatchSendResult answers SendBatch: Data[i] answers the i-th message.
// It is the answer of POST /v1/send/batch (api.BatchSendResult) with, for
// each item, the key it went under and its error as an *Error.
type BatchSendResult struct {
	Data []BatchItemResult `json:"data"`
	// Accepted counts the items accepted (duplicates included), Failed
	// those refused.
	Accepted int `json:"accepted"`
	Failed   int `json:"failed"`
	// RequestID is the answer's X-Request-Id: quote it when reporting a
	// problem.
	RequestID string `json:"-"`
}

// BatchItemResult is one item's answer in a batch: the wire's
// api.BatchItemResult (Status and MessageID when accepted; Error, Message
// and Details when refused; OK, Result, ErrorBody), the idempotency key
// the item went under, and Err.
type BatchItemResult struct {
	api.BatchItemResult
	// IdempotencyKey is the key the item went under: its own, or the one
	// SendBatch made for it. Sending the item again under it is safe.
	IdempotencyKey string `json:"idempotencyKey"`

	requestID string // the batch's
}

// Err returns nil for an accepted item, else its error as an *Error, the
// type of every refused request's error: errors.As, IsCode(err,
// CodeValidation) and Error() work on it as on Send's. Its Code, Message
// and Details are the item's; RequestID is the batch's; Status is 0, for
// an item has no HTTP answer of its own (the batch's was a 200).
func (r *BatchItemResult) Err() error {
	if r.OK() {
		return nil
	}
	return &Error{Code: r.Error, Message: r.Message, Details: r.Details, RequestID: r.requestID}
}

// newBatchSendResult is res with each item's key and request id.
func newBatchSendResult(res *api.BatchSendResult, keys []string, requestID string) *BatchSendResult {
	out := &BatchSendResult{Data: make([]BatchItemResult, len(res.Data)), Accepted: res.Accepted, Failed: res.Failed, RequestID: requestID}
	for i, item := range res.Data {
		out.Data[i] = BatchItemResult{BatchItemResult: item, requestID: requestID}
		if i < len(keys) {
			out.Data[i].IdempotencyKey = keys[i]
		}
	}
	return out
}
