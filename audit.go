package mailroom

import (
	"context"
	"strings"
	"time"
)

// The audit log (docs/api.md "Audit log"): every change an account's keys,
// the operator's CLI or a background state change make to an account is
// recorded in the transaction of the change, and only when it happened.

// AuditAction names a kind of change, as GET /v1/audit-log shows it.
type AuditAction string

// The actions of docs/api.md "Audit log".
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

// AuditActions are every action, in the order docs/api.md lists them.
var AuditActions = []AuditAction{
	AuditAPIKeyCreated, AuditAPIKeyRevoked,
	AuditDomainCreated, AuditDomainVerified, AuditDomainUpdated, AuditDomainDeleted, AuditDomainDKIMRotated,
	AuditWebhookCreated, AuditWebhookUpdated, AuditWebhookSecretRotated, AuditWebhookDeleted,
	AuditTemplateCreated, AuditTemplateUpdated, AuditTemplateDeleted,
	AuditSuppressionCreated, AuditSuppressionDeleted,
	AuditAccountCreated, AuditAccountUpdated,
}

// IsAuditAction reports whether s is one of AuditActions.
func IsAuditAction(s string) bool {
	for _, a := range AuditActions {
		if string(a) == s {
			return true
		}
	}
	return false
}

// AuditActorType says who made a change.
type AuditActorType string

const (
	// AuditByAPIKey is a request authenticated by an API key (the API,
	// the Resend-compatible routes, the dashboard, which calls the API).
	AuditByAPIKey AuditActorType = "api_key"
	// AuditByCLI is an operator's mailroom command.
	AuditByCLI AuditActorType = "cli"
	// AuditBySystem is the service itself: a background re-check that
	// changes a domain's state, anything with no origin in its context.
	AuditBySystem AuditActorType = "system"
)

// AuditActor is who made a change; KeyID is set for AuditByAPIKey only.
type AuditActor struct {
	Type  AuditActorType
	KeyID string
}

// Audit target types: what kind of thing a change was made to.
const (
	AuditTargetAPIKey      = "api_key"
	AuditTargetDomain      = "domain"
	AuditTargetWebhook     = "webhook"
	AuditTargetTemplate    = "template"
	AuditTargetSuppression = "suppression"
	AuditTargetAccount     = "account"
)

// AuditTarget is the thing changed: its type and id (a suppression's id is
// its address, as the API names it).
type AuditTarget struct {
	Type string
	ID   string
}

// AuditChanges maps a field, named as the API names it, to its value
// before and after the change (nil for none: before a creation, after a
// deletion). It never holds a secret (AuditChanges are made only by the
// functions of auditchanges.go, which name the fields they copy).
type AuditChanges map[string][2]any

// PrefixAudit starts the ids of audit entries.
const PrefixAudit = "aud_"

// AuditEntry is one recorded change.
type AuditEntry struct {
	ID        string // "aud_…"
	AccountID string
	Action    AuditAction
	Actor     AuditActor
	Target    AuditTarget
	// RequestID and IP are the API request's (its X-Request-Id and the
	// client address the server saw); "" for the CLI and the system.
	RequestID string
	IP        string
	CreatedAt time.Time
	Changes   AuditChanges
}

// AuditOrigin is who is acting, carried in the context from where a change
// is asked (the HTTP middleware, the CLI) to the store that records it.
type AuditOrigin struct {
	Actor     AuditActor
	RequestID string
	IP        string
}

type auditOriginKey struct{}

// WithAuditOrigin returns ctx carrying o: the changes made under it are
// recorded as o's.
func WithAuditOrigin(ctx context.Context, o AuditOrigin) context.Context {
	return context.WithValue(ctx, auditOriginKey{}, o)
}

// AuditOriginFrom is the origin ctx carries; none is the system: a change
// that no request and no operator asked for is the service's own.
func AuditOriginFrom(ctx context.Context) AuditOrigin {
	if o, ok := ctx.Value(auditOriginKey{}).(AuditOrigin); ok && o.Actor.Type != "" {
		return o
	}
	return AuditOrigin{Actor: AuditActor{Type: AuditBySystem}}
}

// AuditFilter selects entries of GET /v1/audit-log; zero fields select all.
// Since is inclusive, Until exclusive.
type AuditFilter struct {
	Action AuditAction
	KeyID  string
	Since  *time.Time
	Until  *time.Time
}

// NewAuditFilter reads the filters of GET /v1/audit-log as the query gives
// them ("" for absent). A value no entry can have (an unknown action, a
// time that is not RFC 3339) is refused rather than matching nothing.
func NewAuditFilter(action, keyID, since, until string) (AuditFilter, error) {
	f := AuditFilter{Action: AuditAction(action), KeyID: keyID}
	var v Validator
	if action != "" && !IsAuditAction(action) {
		names := make([]string, len(AuditActions))
		for i, a := range AuditActions {
			names[i] = string(a)
		}
		v.Add("action", "%q is not an audit action; the actions are %s", Excerpt(action, 64), OwnText(strings.Join(names, ", ")))
	}
	if keyID != "" && (len(keyID) > 64 || strings.ContainsFunc(keyID, func(c rune) bool { return c <= ' ' || c > '~' })) {
		v.Add("keyId", "must be an API key id, as GET /v1/api-keys shows it")
	}
	parse := func(field, s string) *time.Time {
		if s == "" {
			return nil
		}
		t, err := time.Parse(time.RFC3339, s)
		if err != nil {
			v.Add(field, "must be an RFC 3339 time, such as 2026-11-22T10:00:00Z")
			return nil
		}
		return &t
	}
	f.Since, f.Until = parse("since", since), parse("until", until)
	if f.Since != nil && f.Until != nil && !f.Until.After(*f.Since) {
		v.Add("until", "must be after since")
	}
	return f, v.Err()
}

// AuditStore keeps the audit log. The entries themselves are written by the
// store methods that make the changes, in their transactions.
type AuditStore interface {
	// ListAuditEntries lists an account's entries newest first.
	ListAuditEntries(ctx context.Context, accountID string, f AuditFilter, page Page) ([]*AuditEntry, string, error)
	// DeleteExpiredAuditEntries removes up to limit entries created before
	// cutoff, oldest first, and says how many (retention).
	DeleteExpiredAuditEntries(ctx context.Context, cutoff time.Time, limit int) (int, error)
}
