package api

import "time"

// Scope is what an API key may do (docs/api.md "Authentication").
type Scope string

// The scopes, in the order the API lists them.
const (
	ScopeSend      Scope = "send"      // send, the email log, suppressions, events
	ScopeDomains   Scope = "domains"   // sending domains
	ScopeTemplates Scope = "templates" // templates
	ScopeWebhooks  Scope = "webhooks"  // webhook endpoints, events
	ScopeReceive   Scope = "receive"   // received mail
	ScopeKeys      Scope = "keys"      // the account's API keys: its administrator scope
)

// Scopes returns every scope, in the order the API lists them.
func Scopes() []Scope {
	return []Scope{ScopeSend, ScopeDomains, ScopeTemplates, ScopeWebhooks, ScopeReceive, ScopeKeys}
}

// KeyStatus is an API key's state.
type KeyStatus string

const (
	KeyActive  KeyStatus = "active"
	KeyRevoked KeyStatus = "revoked"
)

// APIKeyCreateRequest is the body of POST /v1/api-keys (OpenAPI schema
// ApiKeyCreateRequest).
type APIKeyCreateRequest struct {
	// Name is 1..128 characters, without control or invisible formatting
	// characters.
	Name string `json:"name"`
	// Scopes is a non-empty list of distinct scopes.
	Scopes []Scope `json:"scopes"`
	// Domain, when set, restricts the key to sending from that one
	// domain of the account, named by its name or its id: mail from any
	// other domain is refused with domain_not_verified.
	Domain string `json:"domain,omitempty"`
}

// APIKey is a key as GET /v1/api-keys, GET /v1/api-keys/{keyId}, GET
// /v1/api-keys/current and DELETE /v1/api-keys/{keyId} show it (OpenAPI
// schema ApiKey): never its secret.
type APIKey struct {
	// KeyID is the key's 16-character public id, safe to log.
	KeyID string `json:"keyId"`
	Name  string `json:"name"`
	// Scopes come back in the order of Scopes().
	Scopes    []Scope   `json:"scopes"`
	Status    KeyStatus `json:"status"`
	CreatedAt time.Time `json:"createdAt"`
	// LastUsedAt is accurate to about a minute; null before first use.
	LastUsedAt *time.Time `json:"lastUsedAt"`
	// RevokedAt is null while the key is active.
	RevokedAt *time.Time `json:"revokedAt"`
	// Domain is the one sending domain (its name) the key may send from;
	// null when the key may send from any domain of the account.
	Domain *string `json:"domain"`
}

// APIKeyCreated answers POST /v1/api-keys (OpenAPI schema ApiKeyCreated):
// the key, and this once the full key itself.
type APIKeyCreated struct {
	APIKey
	// Key is the full key, mailroom_<keyId>_<secret>: shown in this answer
	// only, stored by the service as a digest.
	Key string `json:"key"`
}
