package client

import (
	"context"
	"encoding/json"
)

// Health answers while the service's process runs: GET /healthz (no key).
func (c *Client) Health(ctx context.Context) (*Status, error) {
	out := new(Status)
	return result(out, c.get(ctx, "/healthz", out))
}

// Ready answers while the service's storage answers: GET /readyz (no key).
// A node that is not ready answers service_unavailable; Ready tries once,
// for that answer is the information.
func (c *Client) Ready(ctx context.Context) (*Status, error) {
	out := new(Status)
	return result(out, c.do(ctx, &call{method: "GET", path: "/readyz", mode: retryNever, out: out}))
}

// OpenAPI answers the OpenAPI 3.1 document of the API the service serves:
// GET /v1/openapi.json (no key).
func (c *Client) OpenAPI(ctx context.Context) (json.RawMessage, error) {
	var raw []byte
	if err := c.do(ctx, &call{method: "GET", path: "/v1/openapi.json", mode: retrySafe, raw: &raw}); err != nil {
		return nil, err
	}
	return json.RawMessage(raw), nil
}
