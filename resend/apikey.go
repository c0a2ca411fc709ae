package resend

import "github.com/mailroom/mailroom"

// Resend's key permissions
// (https://resend.com/docs/api-reference/api-keys/create-api-key).
const (
	PermissionFullAccess    = "full_access"
	PermissionSendingAccess = "sending_access"
)

// CreateAPIKeyRequest is the body of POST /api-keys.
type CreateAPIKeyRequest struct {
	Name string `json:"name"`
	// Permission is full_access (the default) or sending_access.
	Permission string `json:"permission"`
	// DomainID restricts a sending_access key to sending from that one
	// domain; Resend uses it with sending_access alone, and so does this.
	DomainID string `json:"domain_id"`
}

// NewKey is r as the scopes and domain of a Mailroom key (apikey.NewKey):
// full_access is every scope, sending_access the send scope alone, which
// is what Resend's two permissions allow. A domain_id beside full_access
// is dropped, as Resend drops it ("only used when the permission is set to
// sending_access").
func (r CreateAPIKeyRequest) NewKey() (name string, scopes []string, domain string, err error) {
	switch r.Permission {
	case "", PermissionFullAccess:
		for _, s := range mailroom.AllScopes {
			scopes = append(scopes, string(s))
		}
		return r.Name, scopes, "", nil
	case PermissionSendingAccess:
		return r.Name, []string{string(mailroom.ScopeSend)}, r.DomainID, nil
	}
	var v mailroom.Validator
	v.Add("permission", `must be "full_access" or "sending_access", not %q`, mailroom.Excerpt(r.Permission, 64))
	return "", nil, "", v.Err()
}

// CreatedAPIKey answers POST /api-keys: the key's id and, this once, the
// whole key (Resend calls it the token).
type CreatedAPIKey struct {
	ID    string `json:"id"`
	Token string `json:"token"`
}

// APIKey is a key in GET /api-keys: never its token.
type APIKey struct {
	ID         string  `json:"id"`
	Name       string  `json:"name"`
	CreatedAt  string  `json:"created_at"`
	LastUsedAt *string `json:"last_used_at"` // null while never used
}

// APIKeyList answers GET /api-keys.
type APIKeyList struct {
	Object  string   `json:"object"` // "list"
	HasMore bool     `json:"has_more"`
	Data    []APIKey `json:"data"`
}

// DeletedAPIKey answers DELETE /api-keys/{id}: Resend's SDKs read any
// JSON body (Node parses every 2xx), and a removal answers what it
// removed.
type DeletedAPIKey struct {
	Object  string `json:"object"` // "api_key"
	ID      string `json:"id"`
	Deleted bool   `json:"deleted"`
}

// ToAPIKey shows k as GET /api-keys does.
func ToAPIKey(k *mailroom.APIKey) APIKey {
	out := APIKey{ID: k.KeyID, Name: k.Name, CreatedAt: timestamp(k.CreatedAt)}
	if k.LastUsedAt != nil {
		used := timestamp(*k.LastUsedAt)
		out.LastUsedAt = &used
	}
	return out
}
