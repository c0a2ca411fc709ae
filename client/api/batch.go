package api

// MaxBatchMessages is the most messages one POST /v1/send/batch holds.
const MaxBatchMessages = 500

// BatchSendRequest is the body of POST /v1/send/batch (OpenAPI schema
// BatchSendRequest): 1..500 send requests, each accepted or refused on its
// own. The Idempotency-Key header is refused on a batch: give each item its
// own IdempotencyKey, so that a retried batch sends nothing twice.
type BatchSendRequest struct {
	Messages []SendRequest `json:"messages"`
}

// BatchSendResult answers POST /v1/send/batch (OpenAPI schema
// BatchSendResult): Data[i] answers Messages[i].
type BatchSendResult struct {
	Data []BatchItemResult `json:"data"`
	// Accepted counts the items answered with a status (duplicates
	// included), Failed those answered with an error.
	Accepted int `json:"accepted"`
	Failed   int `json:"failed"`
}

// BatchItemResult is one item's answer in a batch: either a SendResult
// (Status and MessageID set) or the error body the item would have got had
// it been sent alone (Error, Message and perhaps Details set; OpenAPI
// schema BatchItemError). The API writes only the members of the one it
// is.
type BatchItemResult struct {
	Status    SendStatus    `json:"status,omitempty"`
	MessageID string        `json:"messageId,omitempty"`
	Error     string        `json:"error,omitempty"`
	Message   string        `json:"message,omitempty"`
	Details   []ErrorDetail `json:"details,omitempty"`
}

// OK reports whether the item was accepted (queued, scheduled or a
// duplicate).
func (r *BatchItemResult) OK() bool { return r.Error == "" }

// Result returns the item's SendResult, or nil when it failed.
func (r *BatchItemResult) Result() *SendResult {
	if !r.OK() {
		return nil
	}
	return &SendResult{Status: r.Status, MessageID: r.MessageID}
}

// ErrorBody returns the item's error body, or nil when it was accepted.
func (r *BatchItemResult) ErrorBody() *ErrorBody {
	if r.OK() {
		return nil
	}
	return &ErrorBody{Error: r.Error, Message: r.Message, Details: r.Details}
}
