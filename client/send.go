package client

import (
	"context"
	"net/http"
	"slices"

	"github.com/mailroom/mailroom/client/api"
)

// Send sends one message: POST /v1/send (scope send). A nil error means
// the message is committed to the service's storage; res.Status is
// SendQueued, SendScheduled (req.ScheduledAt is later than now) or
// SendDuplicate (a request already accepted under this idempotency key:
// res.MessageID is the first message's).
//
// Without req.IdempotencyKey, Send sends an Idempotency-Key header with a
// random key made for this call, the same on every attempt, so that its
// retries never send twice. When the message may have been accepted
// though no attempt was answered with success (the connection broke while
// the answer was awaited, a 500, a proxy's 502 or 504), the error is an
// *OutcomeUnknownError (errors.Is ErrOutcomeUnknown) naming the key:
// sending again with that key is safe.
func (c *Client) Send(ctx context.Context, req *SendRequest) (*SendResult, error) {
	if req == nil {
		return nil, errNilRequest
	}
	cl, err := newCall("POST", "/v1/send", req, retrySafe)
	if err != nil {
		return nil, err
	}
	key := req.IdempotencyKey
	if key == "" {
		key = c.newKey()
		cl.header = http.Header{"Idempotency-Key": {key}}
	}
	cl.keys = []string{key}
	out := new(SendResult)
	cl.out = out
	return result(out, c.do(ctx, cl))
}

// SendBatch sends up to MaxBatchMessages (500) messages in one request:
// POST /v1/send/batch (scope send). Each is accepted or refused on its
// own: res.Data[i] answers messages[i] (Err is nil, or the *Error the
// message would have had sent alone), and every accepted one is committed
// when SendBatch returns no error. An error means that nothing was
// stored (the request itself was refused: a bad envelope, 401, 413, 429,
// 503, …), or that what was stored is unknown: an *OutcomeUnknownError,
// as Send's, naming every message's key.
//
// The service refuses an Idempotency-Key header on a batch, so SendBatch
// gives each message without an IdempotencyKey a random key of its own (on
// a copy: messages is not changed), the same on every attempt, so that its
// retries never send twice; res.Data[i].IdempotencyKey is the key
// messages[i] went under.
func (c *Client) SendBatch(ctx context.Context, messages []SendRequest) (*BatchSendResult, error) {
	items := slices.Clone(messages)
	keys := make([]string, len(items))
	for i := range items {
		if items[i].IdempotencyKey == "" {
			items[i].IdempotencyKey = c.newKey()
		}
		keys[i] = items[i].IdempotencyKey
	}
	if items == nil {
		items = []SendRequest{} // the service says what is wrong with an empty batch
	}
	cl, err := newCall("POST", "/v1/send/batch", &api.BatchSendRequest{Messages: items}, retrySafe)
	if err != nil {
		return nil, err
	}
	var out api.BatchSendResult
	var requestID string
	cl.out, cl.requestID, cl.keys = &out, &requestID, keys
	if err := c.do(ctx, cl); err != nil {
		return nil, err
	}
	return newBatchSendResult(&out, keys, requestID), nil
}
