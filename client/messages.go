package client

import (
	"context"
	"iter"
	"time"

	"github.com/mailroom/mailroom/client/api"
)

// ListMessages answers a page of the email log, newest first, with
// filters: GET /v1/messages (scope send). The messages come without their
// timelines (GetMessage has them).
func (c *Client) ListMessages(ctx context.Context, opts *MessageListOptions) (*List[Message], error) {
	return list[api.Message](ctx, c, "/v1/messages", opts.values())
}

// AllMessages iterates over the email log with filters: ListMessages page
// by page.
func (c *Client) AllMessages(ctx context.Context, opts *MessageListOptions) iter.Seq2[Message, error] {
	o := deref(opts)
	o.Limit = pageSize(o.Limit)
	return pages(ctx, o.Cursor, func(ctx context.Context, cursor string) (*List[Message], error) {
		page := o
		page.Cursor = cursor
		return c.ListMessages(ctx, &page)
	})
}

// GetMessage answers one message with each recipient's state and its
// timeline: GET /v1/messages/{messageId} (scope send).
func (c *Client) GetMessage(ctx context.Context, messageID string) (*Message, error) {
	out := new(Message)
	return result(out, c.get(ctx, "/v1/messages/"+pathEscape(messageID), out))
}

// GetRawMessage answers the exact signed RFC 5322 bytes that were (or will
// be) sent: GET /v1/messages/{messageId}/raw (scope send). A message that
// is scheduled or canceled has none yet (invalid_state).
func (c *Client) GetRawMessage(ctx context.Context, messageID string) ([]byte, error) {
	var raw []byte
	err := c.do(ctx, &call{method: "GET", path: "/v1/messages/" + pathEscape(messageID) + "/raw", mode: retrySafe, raw: &raw})
	if err != nil {
		return nil, err
	}
	return raw, nil
}

// ListScheduled answers a page of the messages still scheduled, soonest
// first: GET /v1/scheduled (scope send).
func (c *Client) ListScheduled(ctx context.Context, opts *ListOptions) (*List[Message], error) {
	return list[api.Message](ctx, c, "/v1/scheduled", opts.values())
}

// AllScheduled iterates over the messages still scheduled: ListScheduled
// page by page.
func (c *Client) AllScheduled(ctx context.Context, opts *ListOptions) iter.Seq2[Message, error] {
	o := deref(opts)
	return pages(ctx, o.Cursor, func(ctx context.Context, cursor string) (*List[Message], error) {
		return c.ListScheduled(ctx, &ListOptions{Limit: pageSize(o.Limit), Cursor: cursor})
	})
}

// RescheduleMessage moves a scheduled message to at (at most 30 days
// ahead; a time not after now sends it now): PATCH
// /v1/scheduled/{messageId} (scope send). It answers the message with its
// timeline; invalid_state when it is no longer scheduled.
func (c *Client) RescheduleMessage(ctx context.Context, messageID string, at time.Time) (*Message, error) {
	out := new(Message)
	return result(out, c.send(ctx, "PATCH", "/v1/scheduled/"+pathEscape(messageID), &api.RescheduleRequest{ScheduledAt: at}, retrySafe, out))
}

// CancelMessage cancels a scheduled message: nothing is sent. DELETE
// /v1/scheduled/{messageId} (scope send). It answers the message, status
// MessageCanceled; invalid_state when it is no longer scheduled (a message
// already sent cannot be canceled).
//
// RescheduleMessage and CancelMessage are named alike, a verb and the
// message they take, as GetMessage is: the two act on one message by its
// id, and the status a cancel leaves is MessageCanceled.
func (c *Client) CancelMessage(ctx context.Context, messageID string) (*Message, error) {
	out := new(Message)
	return result(out, c.send(ctx, "DELETE", "/v1/scheduled/"+pathEscape(messageID), nil, retrySafe, out))
}
