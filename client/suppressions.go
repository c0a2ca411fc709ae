package client

import (
	"context"
	"iter"
	"net/http"

	"github.com/mailroom/mailroom/client/api"
)

// ListSuppressions answers a page of the account's suppressed addresses,
// newest first: GET /v1/suppressions (scope send).
func (c *Client) ListSuppressions(ctx context.Context, opts *ListOptions) (*List[Suppression], error) {
	return list[api.Suppression](ctx, c, "/v1/suppressions", opts.values())
}

// AllSuppressions iterates over the account's suppressed addresses:
// ListSuppressions page by page.
func (c *Client) AllSuppressions(ctx context.Context, opts *ListOptions) iter.Seq2[Suppression, error] {
	o := deref(opts)
	return pages(ctx, o.Cursor, func(ctx context.Context, cursor string) (*List[Suppression], error) {
		return c.ListSuppressions(ctx, &ListOptions{Limit: pageSize(o.Limit), Cursor: cursor})
	})
}

// GetSuppression answers an address's entry: GET
// /v1/suppressions/{address} (scope send); not_found when it is not
// suppressed.
func (c *Client) GetSuppression(ctx context.Context, address string) (*Suppression, error) {
	out := new(Suppression)
	return result(out, c.get(ctx, "/v1/suppressions/"+pathEscape(address), out))
}

// AddSuppression suppresses an address (reason manual): POST
// /v1/suppressions (scope send). created is false when the address was
// suppressed already; the entry is then the existing one. After a retry
// whose first attempt was acted on (its answer lost), created is false
// too: the entry is this call's.
func (c *Client) AddSuppression(ctx context.Context, address string) (sup *Suppression, created bool, err error) {
	cl, err := newCall("POST", "/v1/suppressions", &api.SuppressionRequest{Address: address}, retrySafe)
	if err != nil {
		return nil, false, err
	}
	var status int
	out := new(Suppression)
	cl.out, cl.status = out, &status
	if err := c.do(ctx, cl); err != nil {
		return nil, false, err
	}
	return out, status == http.StatusCreated, nil
}

// DeleteSuppression removes an address's entry, whatever its reason: it
// receives mail again. DELETE /v1/suppressions/{address} (scope send).
func (c *Client) DeleteSuppression(ctx context.Context, address string) error {
	return c.send(ctx, "DELETE", "/v1/suppressions/"+pathEscape(address), nil, retrySafe, nil)
}
