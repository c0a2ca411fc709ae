package client

import (
	"context"
	"errors"
)

// get reads path into out.
func (c *Client) get(ctx context.Context, path string, out any) error {
	return c.do(ctx, &call{method: "GET", path: path, mode: retrySafe, out: out})
}

// send makes a request with body (nil for none) and decodes the answer
// into out (nil for none).
func (c *Client) send(ctx context.Context, method, path string, body any, mode retryMode, out any) error {
	cl, err := newCall(method, path, body, mode)
	if err != nil {
		return err
	}
	cl.out = out
	return c.do(ctx, cl)
}

// errNilRequest is the error of a method given a nil request.
var errNilRequest = errors.New("mailroom: the request is nil")

// deref returns *p, or the zero value for nil.
func deref[T any](p *T) T {
	if p == nil {
		var zero T
		return zero
	}
	return *p
}

// result returns out, or nil and err when the call failed.
func result[T any](out *T, err error) (*T, error) {
	if err != nil {
		return nil, err
	}
	return out, nil
}
