package mailroom

import (
	"context"
	"crypto/subtle"
	"time"
)

// Authenticator checks bearer keys against storage (docs/api.md "Authentication").
//
// Every request reads the key's row, so a revocation made by any node or by
// the CLI takes effect on the very next request, kept-alive connection or
// not. What is not written on every request is lastUsedAt: see KeyUsage.
type Authenticator struct {
	Keys  APIKeyStore
	Usage *KeyUsage
	Now   func() time.Time
}

// dummyDigest stands in for the stored digest when the key id is unknown,
// so that an unknown id costs the same digest and comparison as a wrong
// secret and the two cannot be told apart by timing.
var dummyDigest = SecretDigest("mailroom-unknown-key-id-placeholder")

// Messages are fixed strings so that the bodies of the two 401 cases are
// byte-for-byte identical.
const (
	msgInvalidKey = "The API key is not valid."
	msgRevokedKey = "The API key has been revoked."
)

// Authenticate returns the key that token names. The errors, in order:
// ECodeInvalidAPIKey for a malformed key, an unknown id or a wrong secret
// (one message for all three: a 401 never says which half was wrong), then
// ECodeAPIKeyRevoked, which is only said to someone holding the real secret.
func (a *Authenticator) Authenticate(ctx context.Context, token string) (*APIKey, error) {
	keyID, secret, ok := ParseAPIKey(token)
	if !ok {
		// The checksum failed: refused without touching storage.
		return nil, Errorf(ECodeInvalidAPIKey, msgInvalidKey)
	}
	key, err := a.Keys.APIKey(ctx, keyID)
	want := dummyDigest
	switch {
	case err == nil:
		want = key.SecretDigest
	case !IsCode(err, ECodeNotFound):
		return nil, err
	}
	match := subtle.ConstantTimeCompare(SecretDigest(secret), want) == 1
	if err != nil || !match {
		return nil, Errorf(ECodeInvalidAPIKey, msgInvalidKey)
	}
	if key.RevokedAt != nil {
		return nil, Errorf(ECodeAPIKeyRevoked, msgRevokedKey)
	}
	if a.Usage != nil {
		a.Usage.Touch(key, a.Now())
	}
	return key, nil
}

// RequireScope returns ECodeInsufficientScope unless key holds scope;
// every key holds ScopeAny.
func RequireScope(key *APIKey, scope Scope) error {
	if scope == ScopeAny || key.Scopes.Has(scope) {
		return nil
	}
	return Errorf(ECodeInsufficientScope, "This API key lacks the %q scope.", scope)
}
