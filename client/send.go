package client

import (
	"context"
	"net/http"
	"slices"
)

// Send sends one message: POST /v1/send (scope send). A nil error means
// the message is committed to the service's storage; res.Status is
// SendQueued, SendScheduled (req.ScheduledAt is later than now) or
// SendDuplicate (a request already accepted under this idempotency key:
// res.MessageID is the first message's).
//
// Without req.IdempotencyKey, Send sends an Idempotency-Key header with a
// random key made for this call, the same on every attempt, so that its
// retries never send twice. When the last attempt failed on the network,
// the error wraps ErrOutcomeUnknown and names the key: the message may have
// been accepted, and sending again with that key is safe.
func (c *Client) Send(ctx context.Context, req *SendRequest) (*SendResult, error) {
	if req == nil {
		return nil, errNilRequest
	}
	cl, err := newCall("POST", "/v1/send", req, retrySafe)
	if err != nil {
		return nil, err
	}
	if req.IdempotencyKey == "" {
		cl.header = http.Header{"Idempotency-Key": {c.newKey()}}
	}
	cl.keyed = true
	out := new(SendResult)
	cl.out = out
	return result(out, c.do(ctx, cl))
}

// SendBatch sends up to 500 messages in one request: POST /v1/send/batch
// (scope send). Each is accepted or refused on its own: res.Data[i]
// answers messages[i] (see BatchItemResult), and every accepted one is
// committed when SendBatch returns no error. An error means that nothing
// was stored: the request itself was refused (a bad envelope, 401, 413,
// 429, 503, …).
//
// The service refuses an Idempotency-Key header on a batch, so SendBatch
// gives each message without an IdempotencyKey a random key of its own (on
// a copy: messages is not changed), the same on every attempt, so that its
// retries never send twice.
func (c *Client) SendBatch(ctx context.Context, messages []SendRequest) (*BatchSendResult, error) {
	items := slices.Clone(messages)
	for i := range items {
		if items[i].IdempotencyKey == "" {
			items[i].IdempotencyKey = c.newKey()
		}
	}
	if items == nil {
		items = []SendRequest{} // the service says what is wrong with an empty batch
	}
	cl, err := newCall("POST", "/v1/send/batch", &BatchSendRequest{Messages: items}, retrySafe)
	if err != nil {
		return nil, err
	}
	out := new(BatchSendResult)
	cl.out, cl.keyed = out, true
	return result(out, c.do(ctx, cl))
}
