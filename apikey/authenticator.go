package apikey

import (
	"context"
	"crypto/subtle"
	"time"

	"github.com/mailroom/mailroom"
)

// Authenticator checks bearer keys against storage (docs/api.md "Authentication").
//
// Every request reads the key's row, so a revocation made by any node or by
// the CLI takes effect on the very next request, kept-alive connection or
// not. What is not written on every request is lastUsedAt: see Usage.
type Authenticator struct {
	Keys  mailroom.APIKeyStore
	Usage *Usage
	Now   func() time.Time
}

// dummyDigest stands in for the stored digest when the key id is unknown,
// so that an unknown id costs the same digest and comparison as a wrong
// secret. What remains between the two is storage's: a row found takes a
// few microseconds more to return than none (BenchmarkRefusedKeyInterleaved;
// docs/api.md "Authentication" says what that tells an observer).
var dummyDigest = mailroom.SecretDigest("mailroom-unknown-key-id-placeholder")

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
func (a *Authenticator) Authenticate(ctx context.Context, token string) (*mailroom.APIKey, error) {
	keyID, secret, ok := mailroom.ParseAPIKey(token)
	if !ok {
		// The checksum failed: refused without touching storage.
		return nil, mailroom.Errorf(mailroom.ECodeInvalidAPIKey, msgInvalidKey)
	}
	key, err := a.Keys.APIKey(ctx, keyID)
	want := dummyDigest
	switch {
	case err == nil:
		want = key.SecretDigest
	case !mailroom.IsCode(err, mailroom.ECodeNotFound):
		return nil, err
	}
	match := subtle.ConstantTimeCompare(mailroom.SecretDigest(secret), want) == 1
	if err != nil || !match {
		return nil, mailroom.Errorf(mailroom.ECodeInvalidAPIKey, msgInvalidKey)
	}
	if key.RevokedAt != nil {
		return nil, mailroom.Errorf(mailroom.ECodeAPIKeyRevoked, msgRevokedKey)
	}
	if a.Usage != nil {
		a.Usage.Touch(key, a.Now())
	}
	return key, nil
}

// Recheck reads key again for a session that outlives its
// authentication (SMTP submission, whose AUTH comes once): revoked since
// is ECodeAPIKeyRevoked, gone is ECodeInvalidAPIKey. Its use counts as the
// key's, as a request's does.
func (a *Authenticator) Recheck(ctx context.Context, key *mailroom.APIKey) error {
	now, err := a.Keys.APIKey(ctx, key.KeyID)
	switch {
	case mailroom.IsCode(err, mailroom.ECodeNotFound):
		return mailroom.Errorf(mailroom.ECodeInvalidAPIKey, msgInvalidKey)
	case err != nil:
		return err
	case now.RevokedAt != nil:
		return mailroom.Errorf(mailroom.ECodeAPIKeyRevoked, msgRevokedKey)
	}
	if a.Usage != nil {
		a.Usage.Touch(now, a.Now())
	}
	return nil
}
