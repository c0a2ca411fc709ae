package mailroom

import (
	"slices"
	"time"
)

// The changes each audited action records (docs/api.md "Audit log"). Each
// function names the fields it copies, by the names the API gives them, so
// that no secret can slip in with a struct: an API key's secret and digest,
// a webhook's signing secrets and a domain's DKIM private key are never
// among them. Updates record only the fields whose values differ.

// auditTime shows a time as the API does (RFC 3339 in UTC), nil for none.
func auditTime(t *time.Time) any {
	if t == nil {
		return nil
	}
	return t.UTC().Truncate(time.Second).Format(time.RFC3339)
}

// created records the values of a new thing: before is nil. A field
// without a value (nil: a key for every domain) is left out.
func created(fields map[string]any) AuditChanges { return diff(nil, fields) }

// deleted records the values of a thing that went: after is nil.
func deleted(fields map[string]any) AuditChanges { return diff(fields, nil) }

// diff records the fields of before and after whose values differ.
func diff(before, after map[string]any) AuditChanges {
	c := AuditChanges{}
	for _, m := range []map[string]any{before, after} {
		for k := range m {
			if b, a := before[k], after[k]; !equalValue(b, a) {
				c[k] = [2]any{b, a}
			}
		}
	}
	return c
}

func equalValue(a, b any) bool {
	as, aok := a.([]string)
	bs, bok := b.([]string)
	if aok || bok {
		return aok && bok && slices.Equal(as, bs)
	}
	return a == b
}

// apiKeyFields are a key's fields the audit log may show: never its secret
// or digest.
func apiKeyFields(k *APIKey) map[string]any {
	scopes := make([]string, len(k.Scopes))
	for i, s := range k.Scopes {
		scopes[i] = string(s)
	}
	var domain any
	if k.Domain != "" {
		domain = k.Domain
	}
	return map[string]any{"name": k.Name, "scopes": scopes, "domain": domain}
}

// APIKeyCreatedChanges are the changes of api_key.created.
func APIKeyCreatedChanges(k *APIKey) AuditChanges { return created(apiKeyFields(k)) }

// APIKeyRevokedChanges are the changes of api_key.revoked: when.
func APIKeyRevokedChanges(revokedAt time.Time) AuditChanges {
	return AuditChanges{"revokedAt": {nil, auditTime(&revokedAt)}}
}

// domainFields are a domain's settings the audit log may show: never its
// DKIM private key.
func domainFields(d *Domain) map[string]any {
	var pool any // the default pool: no value, as the API shows it (null)
	if d.IPPool != "" {
		pool = d.IPPool
	}
	return map[string]any{"name": d.Name, "status": string(d.Status), "ipPool": pool, "tls": string(d.TLS.OrDefault()),
		"dkimEd25519": d.DKIMKeyOf(DKIMKeyEd25519) != nil, "receiving": d.Receiving,
		"openTracking": d.Tracking.Opens, "clickTracking": d.Tracking.Clicks}
}

// DomainCreatedChanges are the changes of domain.created.
func DomainCreatedChanges(d *Domain) AuditChanges {
	c := created(domainFields(d))
	c["dkimSelector"] = [2]any{nil, d.DKIMSelector}
	return c
}

// DomainUpdatedChanges are the settings an update changed (domain.updated).
func DomainUpdatedChanges(before, after *Domain) AuditChanges {
	return diff(domainFields(before), domainFields(after))
}

// DomainDeletedChanges are the changes of domain.deleted.
func DomainDeletedChanges(name string) AuditChanges { return deleted(map[string]any{"name": name}) }

// DomainStatusChanges are the changes of domain.verified: the status a
// check moved the domain from and to.
func DomainStatusChanges(before, after DomainStatus) AuditChanges {
	return AuditChanges{"status": {string(before), string(after)}}
}

// DomainDKIMRotatedChanges are the changes of domain.dkim_rotated: the
// selectors, never a key.
func DomainDKIMRotatedChanges(oldSelector, newSelector string) AuditChanges {
	return AuditChanges{"dkimSelector": {oldSelector, newSelector}}
}

// webhookFields are an endpoint's fields the audit log may show: never its
// secrets.
func webhookFields(e *WebhookEndpoint) map[string]any {
	return map[string]any{"url": e.URL, "description": e.Description, "events": slices.Clone(e.Events),
		"enabled": e.Enabled, "format": string(formatOr(e.Format))}
}

func formatOr(f WebhookFormat) WebhookFormat {
	if f == "" {
		return WebhookFormatMailroom
	}
	return f
}

// WebhookCreatedChanges are the changes of webhook.created.
func WebhookCreatedChanges(e *WebhookEndpoint) AuditChanges { return created(webhookFields(e)) }

// WebhookUpdatedChanges are the fields an update changed (webhook.updated).
func WebhookUpdatedChanges(before, after *WebhookEndpoint) AuditChanges {
	return diff(webhookFields(before), webhookFields(after))
}

// WebhookSecretRotatedChanges are the changes of webhook.secret_rotated:
// until when the previous secret still signs, never a secret.
func WebhookSecretRotatedChanges(previousUntil time.Time) AuditChanges {
	return AuditChanges{"previousSecretExpiresAt": {nil, auditTime(&previousUntil)}}
}

// WebhookDeletedChanges are the changes of webhook.deleted.
func WebhookDeletedChanges(e *WebhookEndpoint) AuditChanges {
	return deleted(map[string]any{"url": e.URL})
}

// templateFields are a template version's short fields; its html and text
// (up to a megabyte each) are named by the version number instead.
func templateFields(t *Template) map[string]any {
	var layout any
	if t.Layout != nil {
		layout = t.Layout.ID
	}
	return map[string]any{"name": t.Name, "version": t.Version, "description": t.Description,
		"subject": t.Subject, "from": t.From, "layout": layout}
}

// TemplateCreatedChanges are the changes of template.created.
func TemplateCreatedChanges(t *Template) AuditChanges { return created(templateFields(t)) }

// TemplateUpdatedChanges are the fields a new version changed
// (template.updated); the version always does.
func TemplateUpdatedChanges(before, after *Template) AuditChanges {
	return diff(templateFields(before), templateFields(after))
}

// TemplateDeletedChanges are the changes of template.deleted.
func TemplateDeletedChanges(name string) AuditChanges { return deleted(map[string]any{"name": name}) }

// SuppressionChanges are the changes of suppression.created (before is
// nil, or the entry it replaced) and suppression.deleted (after is nil).
func SuppressionChanges(before, after *Suppression) AuditChanges {
	f := func(s *Suppression) map[string]any {
		if s == nil {
			return map[string]any{"address": nil, "reason": nil}
		}
		return map[string]any{"address": s.Address, "reason": string(s.Reason)}
	}
	return diff(f(before), f(after))
}

// rateLimitFields are an account's limit as set, nil for a part that
// follows the defaults.
func rateLimitFields(a *Account) map[string]any {
	var rate, burst any
	if a.RateLimit.Rate != 0 {
		rate = a.RateLimit.Rate
	}
	if a.RateLimit.Burst != 0 {
		burst = a.RateLimit.Burst
	}
	return map[string]any{"rate": rate, "burst": burst}
}

// AccountCreatedChanges are the changes of account.created.
func AccountCreatedChanges(a *Account) AuditChanges {
	f := rateLimitFields(a)
	f["name"] = a.Name
	return created(f)
}

// AccountUpdatedChanges are the limits an update changed (account.updated).
func AccountUpdatedChanges(before, after *Account) AuditChanges {
	return diff(rateLimitFields(before), rateLimitFields(after))
}
