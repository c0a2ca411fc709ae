package client

import (
	"context"
	"iter"
	"strconv"

	"github.com/mailroom/mailroom/client/api"
)

// CreateTemplate saves a template as its version 1: POST /v1/templates
// (scope templates). It is not retried after a network error once the
// request may have been sent.
func (c *Client) CreateTemplate(ctx context.Context, req *TemplateRequest) (*Template, error) {
	if req == nil {
		return nil, errNilRequest
	}
	out := new(Template)
	return result(out, c.send(ctx, "POST", "/v1/templates", req, retryUnsent, out))
}

// ListTemplates answers a page of the account's templates in their current
// versions, without html and text, newest first: GET /v1/templates (scope
// templates).
func (c *Client) ListTemplates(ctx context.Context, opts *ListOptions) (*List[TemplateSummary], error) {
	return list[api.TemplateSummary](ctx, c, "/v1/templates", opts.values())
}

// AllTemplates iterates over the account's templates: ListTemplates page
// by page.
func (c *Client) AllTemplates(ctx context.Context, opts *ListOptions) iter.Seq2[TemplateSummary, error] {
	o := deref(opts)
	return pages(ctx, o.Cursor, func(ctx context.Context, cursor string) (*List[TemplateSummary], error) {
		return c.ListTemplates(ctx, &ListOptions{Limit: pageSize(o.Limit), Cursor: cursor})
	})
}

// GetTemplate answers a template's current version, by its id (tpl_…) or
// name: GET /v1/templates/{idOrName} (scope templates).
func (c *Client) GetTemplate(ctx context.Context, idOrName string) (*Template, error) {
	out := new(Template)
	return result(out, c.get(ctx, "/v1/templates/"+pathEscape(idOrName), out))
}

// UpdateTemplate saves req as the template's next version (req.Name may be
// left empty, and cannot change): PUT /v1/templates/{idOrName} (scope
// templates). It is not retried after a network error once the request may
// have been sent, for each PUT makes a version.
func (c *Client) UpdateTemplate(ctx context.Context, idOrName string, req *TemplateRequest) (*Template, error) {
	if req == nil {
		return nil, errNilRequest
	}
	out := new(Template)
	return result(out, c.send(ctx, "PUT", "/v1/templates/"+pathEscape(idOrName), req, retryUnsent, out))
}

// DeleteTemplate removes a template and its versions; the messages sent
// with it keep what they recorded: DELETE /v1/templates/{idOrName} (scope
// templates).
func (c *Client) DeleteTemplate(ctx context.Context, idOrName string) error {
	return c.send(ctx, "DELETE", "/v1/templates/"+pathEscape(idOrName), nil, retrySafe, nil)
}

// ListTemplateVersions answers a page of a template's versions, newest
// first, without html and text: GET /v1/templates/{idOrName}/versions
// (scope templates).
func (c *Client) ListTemplateVersions(ctx context.Context, idOrName string, opts *ListOptions) (*List[TemplateSummary], error) {
	return list[api.TemplateSummary](ctx, c, "/v1/templates/"+pathEscape(idOrName)+"/versions", opts.values())
}

// AllTemplateVersions iterates over a template's versions:
// ListTemplateVersions page by page.
func (c *Client) AllTemplateVersions(ctx context.Context, idOrName string, opts *ListOptions) iter.Seq2[TemplateSummary, error] {
	o := deref(opts)
	return pages(ctx, o.Cursor, func(ctx context.Context, cursor string) (*List[TemplateSummary], error) {
		return c.ListTemplateVersions(ctx, idOrName, &ListOptions{Limit: pageSize(o.Limit), Cursor: cursor})
	})
}

// GetTemplateVersion answers one version of a template, with its content:
// GET /v1/templates/{idOrName}/versions/{version} (scope templates).
func (c *Client) GetTemplateVersion(ctx context.Context, idOrName string, version int) (*Template, error) {
	out := new(Template)
	return result(out, c.get(ctx, "/v1/templates/"+pathEscape(idOrName)+"/versions/"+strconv.Itoa(version), out))
}

// RenderTemplate renders a template's current version with variables,
// exactly as a send would, and sends nothing: POST
// /v1/templates/{idOrName}/render (scope templates).
func (c *Client) RenderTemplate(ctx context.Context, idOrName string, variables map[string]any) (*TemplateRendered, error) {
	out := new(TemplateRendered)
	return result(out, c.send(ctx, "POST", "/v1/templates/"+pathEscape(idOrName)+"/render", &api.TemplateRenderRequest{Variables: variables}, retrySafe, out))
}
