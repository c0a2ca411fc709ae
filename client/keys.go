package client

import (
	"context"
	"iter"

	"github.com/mailroom/mailroom/client/api"
)

// CreateAPIKey creates a key of the caller's account: POST /v1/api-keys
// (scope keys). The full key is in the answer's Key, this once. It is not
// retried after a network error once the request may have been sent.
func (c *Client) CreateAPIKey(ctx context.Context, req *APIKeyCreateRequest) (*APIKeyCreated, error) {
	if req == nil {
		return nil, errNilRequest
	}
	out := new(APIKeyCreated)
	return result(out, c.send(ctx, "POST", "/v1/api-keys", req, retryUnsent, out))
}

// ListAPIKeys answers a page of the account's keys, revoked ones included,
// newest first: GET /v1/api-keys (scope keys).
func (c *Client) ListAPIKeys(ctx context.Context, opts *ListOptions) (*List[APIKey], error) {
	return list[api.APIKey](ctx, c, "/v1/api-keys", opts.values())
}

// AllAPIKeys iterates over the account's keys: ListAPIKeys page by page.
func (c *Client) AllAPIKeys(ctx context.Context, opts *ListOptions) iter.Seq2[APIKey, error] {
	o := deref(opts)
	return pages(ctx, o.Cursor, func(ctx context.Context, cursor string) (*List[APIKey], error) {
		return c.ListAPIKeys(ctx, &ListOptions{Limit: pageSize(o.Limit), Cursor: cursor})
	})
}

// GetAPIKey answers one key of the account: GET /v1/api-keys/{keyId}
// (scope keys).
func (c *Client) GetAPIKey(ctx context.Context, keyID string) (*APIKey, error) {
	out := new(APIKey)
	return result(out, c.get(ctx, "/v1/api-keys/"+pathEscape(keyID), out))
}

// RevokeAPIKey revokes a key, which fails from its next request on: DELETE
// /v1/api-keys/{keyId} (scope keys). Revoking a revoked key is harmless.
func (c *Client) RevokeAPIKey(ctx context.Context, keyID string) (*APIKey, error) {
	out := new(APIKey)
	return result(out, c.send(ctx, "DELETE", "/v1/api-keys/"+pathEscape(keyID), nil, retrySafe, out))
}

// CurrentAPIKey answers the calling key, so that a program learns what it
// may do: GET /v1/api-keys/current (any scope).
func (c *Client) CurrentAPIKey(ctx context.Context) (*APIKey, error) {
	out := new(APIKey)
	return result(out, c.get(ctx, "/v1/api-keys/current", out))
}
