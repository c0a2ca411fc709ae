package api

import "time"

// AuditAction names a kind of change in the audit log (docs/api.md "Audit
// log").
type AuditAction string

// The audit log's actions.
const (
	AuditAPIKeyCreated        AuditAction = "api_key.created"
	AuditAPIKeyRevoked        AuditAction = "api_key.revoked"
	AuditDomainCreated        AuditAction = "domain.created"
	AuditDomainVerified       AuditAction = "domain.verified"
	AuditDomainUpdated        AuditAction = "domain.updated"
	AuditDomainDeleted        AuditAction = "domain.deleted"
	AuditDomainDKIMRotated    AuditAction = "domain.dkim_rotated"
	AuditWebhookCreated       AuditAction = "webhook.created"
	AuditWebhookUpdated       AuditAction = "webhook.updated"
	AuditWebhookSecretRotated AuditAction = "webhook.secret_rotated"
	AuditWebhookDeleted       AuditAction = "webhook.deleted"
	AuditTemplateCreated      AuditAction = "template.created"
	AuditTemplateUpdated      AuditAction = "template.updated"
	AuditTemplateDeleted      AuditAction = "template.deleted"
	AuditSuppressionCreated   AuditAction = "suppression.created"
	AuditSuppressionDeleted   AuditAction = "suppression.deleted"
	AuditAccountCreated       AuditAction = "account.created"
	AuditAccountUpdated       AuditAction = "account.updated"
)

// AuditActorType says who made a change.
type AuditActorType string

const (
	AuditByAPIKey AuditActorType = "api_key" // a request with an API key (the API, the dashboard)
	AuditByCLI    AuditActorType = "cli"     // an operator's mailroom command
	AuditBySystem AuditActorType = "system"  // the service itself, e.g. a background domain re-check
)

// AuditActor is who made a change (OpenAPI schema AuditActor).
type AuditActor struct {
	Type AuditActorType `json:"type"`
	// KeyID is the key's id when Type is AuditByAPIKey, else absent.
	KeyID string `json:"keyId,omitempty"`
}

// AuditTarget is the thing changed (OpenAPI schema AuditTarget): its type
// (api_key, domain, webhook, template, suppression, account) and id (a
// suppression's is its address).
type AuditTarget struct {
	Type string `json:"type"`
	ID   string `json:"id"`
}

// AuditEntry is one entry of GET /v1/audit-log (OpenAPI schema
// AuditEntry).
type AuditEntry struct {
	ID     string      `json:"id"`
	Action AuditAction `json:"action"`
	Actor  AuditActor  `json:"actor"`
	Target AuditTarget `json:"target"`
	// RequestID is the X-Request-Id of the API request that made the
	// change; null for the CLI and the system.
	RequestID *string `json:"requestId"`
	// IP is the client address the server saw; null for the CLI and the
	// system.
	IP        *string   `json:"ip"`
	CreatedAt time.Time `json:"createdAt"`
	// Changes maps each changed field, named as the API names it, to
	// [before, after] (null for none). It never holds a secret.
	Changes map[string][2]any `json:"changes"`
}

// AuditActions returns every audit action, in the order docs/api.md lists
// them.
func AuditActions() []AuditAction {
	return []AuditAction{
		AuditAPIKeyCreated, AuditAPIKeyRevoked,
		AuditDomainCreated, AuditDomainVerified, AuditDomainUpdated, AuditDomainDeleted, AuditDomainDKIMRotated,
		AuditWebhookCreated, AuditWebhookUpdated, AuditWebhookSecretRotated, AuditWebhookDeleted,
		AuditTemplateCreated, AuditTemplateUpdated, AuditTemplateDeleted,
		AuditSuppressionCreated, AuditSuppressionDeleted,
		AuditAccountCreated, AuditAccountUpdated,
	}
}
