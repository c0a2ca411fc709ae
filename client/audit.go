package client

import (
	"context"
	"iter"
	"net/url"
	"time"

	"github.com/mailroom/mailroom/client/api"
)

// The audit log's types (docs/api.md "Audit log").
type (
	AuditEntry     = api.AuditEntry
	AuditAction    = api.AuditAction
	AuditActor     = api.AuditActor
	AuditActorType = api.AuditActorType
	AuditTarget    = api.AuditTarget
)

const (
	// AuditAction: AuditEntry.Action, AuditListOptions.Action.
	AuditAPIKeyCreated        = api.AuditAPIKeyCreated
	AuditAPIKeyRevoked        = api.AuditAPIKeyRevoked
	AuditDomainCreated        = api.AuditDomainCreated
	AuditDomainVerified       = api.AuditDomainVerified
	AuditDomainUpdated        = api.AuditDomainUpdated
	AuditDomainDeleted        = api.AuditDomainDeleted
	AuditDomainDKIMRotated    = api.AuditDomainDKIMRotated
	AuditWebhookCreated       = api.AuditWebhookCreated
	AuditWebhookUpdated       = api.AuditWebhookUpdated
	AuditWebhookSecretRotated = api.AuditWebhookSecretRotated
	AuditWebhookDeleted       = api.AuditWebhookDeleted
	AuditTemplateCreated      = api.AuditTemplateCreated
	AuditTemplateUpdated      = api.AuditTemplateUpdated
	AuditTemplateDeleted      = api.AuditTemplateDeleted
	AuditSuppressionCreated   = api.AuditSuppressionCreated
	AuditSuppressionDeleted   = api.AuditSuppressionDeleted
	AuditAccountCreated       = api.AuditAccountCreated
	AuditAccountUpdated       = api.AuditAccountUpdated

	// AuditActorType: AuditActor.Type.
	AuditByAPIKey = api.AuditByAPIKey
	AuditByCLI    = api.AuditByCLI
	AuditBySystem = api.AuditBySystem
)

// AuditListOptions are the filters of GET /v1/audit-log and its paging.
type AuditListOptions struct {
	Action AuditAction
	// KeyID selects the changes one API key made.
	KeyID string
	// Since selects the entries created at or after it, Until those
	// created before it.
	Since, Until time.Time

	Limit  int
	Cursor string
}

func (o *AuditListOptions) values() url.Values {
	if o == nil {
		return url.Values{}
	}
	q := (&ListOptions{Limit: o.Limit, Cursor: o.Cursor}).values()
	setNonEmpty(q, "action", string(o.Action))
	setNonEmpty(q, "keyId", o.KeyID)
	setTime(q, "since", o.Since)
	setTime(q, "until", o.Until)
	return q
}

// ListAuditLog answers a page of the account's audit log, newest first,
// with filters: GET /v1/audit-log (scope keys).
func (c *Client) ListAuditLog(ctx context.Context, opts *AuditListOptions) (*List[AuditEntry], error) {
	return list[api.AuditEntry](ctx, c, "/v1/audit-log", opts.values())
}

// AllAuditLog iterates over the account's audit log with filters:
// ListAuditLog page by page.
func (c *Client) AllAuditLog(ctx context.Context, opts *AuditListOptions) iter.Seq2[AuditEntry, error] {
	o := deref(opts)
	o.Limit = pageSize(o.Limit)
	return pages(ctx, o.Cursor, func(ctx context.Context, cursor string) (*List[AuditEntry], error) {
		page := o
		page.Cursor = cursor
		return c.ListAuditLog(ctx, &page)
	})
}

// AuditActions returns every audit action.
func AuditActions() []AuditAction { return api.AuditActions() }
