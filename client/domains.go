package client

import (
	"context"
	"iter"

	"github.com/mailroom/mailroom/client/api"
)

// CreateDomain adds a sending domain and answers the DNS records to
// publish: POST /v1/domains (scope domains). already_exists when the
// account has it. It is not retried after a network error once the
// request may have been sent.
func (c *Client) CreateDomain(ctx context.Context, name string) (*Domain, error) {
	out := new(Domain)
	return result(out, c.send(ctx, "POST", "/v1/domains", &api.DomainCreateRequest{Name: name}, retryUnsent, out))
}

// ListDomains answers a page of the account's domains: GET /v1/domains
// (scope domains).
func (c *Client) ListDomains(ctx context.Context, opts *ListOptions) (*List[Domain], error) {
	return list[api.Domain](ctx, c, "/v1/domains", opts.values())
}

// AllDomains iterates over the account's domains: ListDomains page by
// page.
func (c *Client) AllDomains(ctx context.Context, opts *ListOptions) iter.Seq2[Domain, error] {
	o := deref(opts)
	return pages(ctx, o.Cursor, func(ctx context.Context, cursor string) (*List[Domain], error) {
		return c.ListDomains(ctx, &ListOptions{Limit: pageSize(o.Limit), Cursor: cursor})
	})
}

// GetDomain answers a domain and each record's state: GET
// /v1/domains/{domain} (scope domains).
func (c *Client) GetDomain(ctx context.Context, name string) (*Domain, error) {
	out := new(Domain)
	return result(out, c.get(ctx, "/v1/domains/"+pathEscape(name), out))
}

// VerifyDomain checks the domain's records in DNS now and answers the
// domain: POST /v1/domains/{domain}/verify (scope domains).
func (c *Client) VerifyDomain(ctx context.Context, name string) (*Domain, error) {
	out := new(Domain)
	return result(out, c.send(ctx, "POST", "/v1/domains/"+pathEscape(name)+"/verify", nil, retrySafe, out))
}

// RotateDomainDKIM starts a rotation of the domain's DKIM key and answers
// the domain with the new key's record beside the active one, status
// pending: POST /v1/domains/{domain}/dkim/rotate (scope domains). Publish
// that record and verify the domain; signing moves to the new key once
// the record is found, and the old record then carries RemovableAfter. A
// rotation already pending is *Error with code invalid_state (409). Not
// retried after the request may have been sent: a second rotation would
// be refused as pending, or start another.
func (c *Client) RotateDomainDKIM(ctx context.Context, name string) (*Domain, error) {
	out := new(Domain)
	return result(out, c.send(ctx, "POST", "/v1/domains/"+pathEscape(name)+"/dkim/rotate", nil, retryUnsent, out))
}

// UpdateDomain changes the settings req sets, such as TLS; the others
// keep their values: PATCH /v1/domains/{domain} (scope domains). Setting
// a value twice is the same as once, so it is retried like a read.
func (c *Client) UpdateDomain(ctx context.Context, name string, req *DomainUpdateRequest) (*Domain, error) {
	if req == nil {
		req = &DomainUpdateRequest{}
	}
	out := new(Domain)
	return result(out, c.send(ctx, "PATCH", "/v1/domains/"+pathEscape(name), req, retrySafe, out))
}

// DeleteDomain removes a sending domain: DELETE /v1/domains/{domain}
// (scope domains).
func (c *Client) DeleteDomain(ctx context.Context, name string) error {
	return c.send(ctx, "DELETE", "/v1/domains/"+pathEscape(name), nil, retrySafe, nil)
}
