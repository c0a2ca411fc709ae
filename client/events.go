package client

import (
	"context"
	"iter"
	"net/url"

	"github.com/mailroom/mailroom/client/api"
)

// ListEvents answers a page of the account's events, newest first, with
// filters: GET /v1/events (scope send or webhooks). A consumer that was
// down catches up with it.
func (c *Client) ListEvents(ctx context.Context, opts *EventListOptions) (*List[EventRecord], error) {
	return list[api.EventRecord](ctx, c, "/v1/events", opts.values())
}

// AllEvents iterates over the account's events with filters: ListEvents
// page by page.
func (c *Client) AllEvents(ctx context.Context, opts *EventListOptions) iter.Seq2[EventRecord, error] {
	o := deref(opts)
	o.Limit = pageSize(o.Limit)
	return pages(ctx, o.Cursor, func(ctx context.Context, cursor string) (*List[EventRecord], error) {
		page := o
		page.Cursor = cursor
		return c.ListEvents(ctx, &page)
	})
}

// ReplayEvent queues a stored event again, under the same event id (so
// the same webhook-id: a consumer that deduplicates on it ignores the
// replay), to every enabled endpoint subscribed to its type, or to the
// endpoint endpointID names ("" for every one): POST
// /v1/events/{eventId}/replay (scope webhooks). A replay is a new delivery;
// it is not retried after a network error once the request may have been
// sent.
func (c *Client) ReplayEvent(ctx context.Context, eventID, endpointID string) (*ReplayResult, error) {
	cl := &call{method: "POST", path: "/v1/events/" + pathEscape(eventID) + "/replay", mode: retryUnsent}
	if endpointID != "" {
		cl.query = url.Values{"endpoint": {endpointID}}
	}
	out := new(ReplayResult)
	cl.out = out
	return result(out, c.do(ctx, cl))
}
