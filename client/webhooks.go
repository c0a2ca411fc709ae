package client

import (
	"context"
	"iter"

	"github.com/mailroom/mailroom/client/api"
)

// CreateWebhook adds an endpoint that events are delivered to: POST
// /v1/webhooks (scope webhooks). The answer's Secret, shown this once, is
// what VerifyWebhook needs. It is not retried after a network error once
// the request may have been sent.
func (c *Client) CreateWebhook(ctx context.Context, req *WebhookCreateRequest) (*WebhookCreated, error) {
	if req == nil {
		return nil, errNilRequest
	}
	out := new(WebhookCreated)
	return result(out, c.send(ctx, "POST", "/v1/webhooks", req, retryUnsent, out))
}

// ListWebhooks answers a page of the account's endpoints, newest first:
// GET /v1/webhooks (scope webhooks).
func (c *Client) ListWebhooks(ctx context.Context, opts *ListOptions) (*List[Webhook], error) {
	return list[api.Webhook](ctx, c, "/v1/webhooks", opts.values())
}

// AllWebhooks iterates over the account's endpoints: ListWebhooks page by
// page.
func (c *Client) AllWebhooks(ctx context.Context, opts *ListOptions) iter.Seq2[Webhook, error] {
	o := deref(opts)
	return pages(ctx, o.Cursor, func(ctx context.Context, cursor string) (*List[Webhook], error) {
		return c.ListWebhooks(ctx, &ListOptions{Limit: pageSize(o.Limit), Cursor: cursor})
	})
}

// GetWebhook answers one endpoint, without its secret: GET
// /v1/webhooks/{id} (scope webhooks).
func (c *Client) GetWebhook(ctx context.Context, id string) (*Webhook, error) {
	out := new(Webhook)
	return result(out, c.get(ctx, "/v1/webhooks/"+pathEscape(id), out))
}

// UpdateWebhook changes the fields req sets; the others keep their values:
// PATCH /v1/webhooks/{id} (scope webhooks).
func (c *Client) UpdateWebhook(ctx context.Context, id string, req *WebhookUpdateRequest) (*Webhook, error) {
	if req == nil {
		req = &WebhookUpdateRequest{}
	}
	out := new(Webhook)
	return result(out, c.send(ctx, "PATCH", "/v1/webhooks/"+pathEscape(id), req, retrySafe, out))
}

// DeleteWebhook removes an endpoint with its pending deliveries and its
// attempts log: DELETE /v1/webhooks/{id} (scope webhooks).
func (c *Client) DeleteWebhook(ctx context.Context, id string) error {
	return c.send(ctx, "DELETE", "/v1/webhooks/"+pathEscape(id), nil, retrySafe, nil)
}

// RotateWebhookSecret replaces an endpoint's secret: POST
// /v1/webhooks/{id}/rotate-secret (scope webhooks). The new secret is shown
// this once; the old one keeps signing beside it for 24 hours. It is not
// retried after a network error once the request may have been sent.
func (c *Client) RotateWebhookSecret(ctx context.Context, id string) (*WebhookSecret, error) {
	out := new(WebhookSecret)
	return result(out, c.send(ctx, "POST", "/v1/webhooks/"+pathEscape(id)+"/rotate-secret", nil, retryUnsent, out))
}

// ListWebhookDeliveries answers a page of an endpoint's delivery attempts,
// newest first, with filters: GET /v1/webhooks/{id}/deliveries (scope
// webhooks).
func (c *Client) ListWebhookDeliveries(ctx context.Context, id string, opts *DeliveryListOptions) (*List[WebhookAttempt], error) {
	return list[api.WebhookAttempt](ctx, c, "/v1/webhooks/"+pathEscape(id)+"/deliveries", opts.values())
}

// AllWebhookDeliveries iterates over an endpoint's delivery attempts with
// filters: ListWebhookDeliveries page by page.
func (c *Client) AllWebhookDeliveries(ctx context.Context, id string, opts *DeliveryListOptions) iter.Seq2[WebhookAttempt, error] {
	o := deref(opts)
	o.Limit = pageSize(o.Limit)
	return pages(ctx, o.Cursor, func(ctx context.Context, cursor string) (*List[WebhookAttempt], error) {
		page := o
		page.Cursor = cursor
		return c.ListWebhookDeliveries(ctx, id, &page)
	})
}

// TestWebhook queues a webhook.test event to one endpoint and answers the
// event: POST /v1/webhooks/{id}/test (scope webhooks). It is not retried
// after a network error once the request may have been sent.
func (c *Client) TestWebhook(ctx context.Context, id string) (*EventRecord, error) {
	out := new(EventRecord)
	return result(out, c.send(ctx, "POST", "/v1/webhooks/"+pathEscape(id)+"/test", nil, retryUnsent, out))
}
