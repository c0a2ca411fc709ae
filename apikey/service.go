package apikey

import (
	"context"
	"time"

	"github.com/mailroom/mailroom"
)

// Service is the service behind API keys (docs/api.md "API keys"):
// creating one, whose whole key is shown this once, and finding and
// revoking an account's. The HTTP API, the command line and `serve --dev`
// create keys here, so that they cannot disagree on what a key may be
// named or hold.
type Service struct {
	Store mailroom.APIKeyStore
	// Now is the clock; nil means time.Now.
	Now func() time.Time
}

// Fields names a create's fields in the problems it reports, as the
// caller's surface calls them.
type Fields struct{ Name, Scopes string }

// APIFields are the fields of POST /v1/api-keys.
var APIFields = Fields{Name: "name", Scopes: "scopes"}

func (s *Service) now() time.Time {
	if s.Now != nil {
		return s.Now().UTC()
	}
	return time.Now().UTC()
}

// CheckNew validates a new key's name and the names of its scopes as the
// client gave them, and returns the scopes. Create checks them too; a
// surface that must refuse bad input before it reaches storage (the
// command line, which would otherwise create a data directory first)
// calls it before.
func CheckNew(name string, scopes []string, f Fields) (mailroom.Scopes, error) {
	var v mailroom.Validator
	mailroom.ValidateKeyName(&v, f.Name, name)
	ss := mailroom.ParseScopes(&v, f.Scopes, scopes)
	return ss, v.Err()
}

// Create validates a new key of the account (CheckNew) and stores it.
// full is the key itself, which exists nowhere else: only its digest is
// stored.
func (s *Service) Create(ctx context.Context, accountID, name string, scopes []string, f Fields) (full string, key *mailroom.APIKey, err error) {
	ss, err := CheckNew(name, scopes, f)
	if err != nil {
		return "", nil, err
	}
	full, key = mailroom.NewAPIKey(accountID, name, ss, s.now())
	if err := s.Store.CreateAPIKey(ctx, key); err != nil {
		return "", nil, err
	}
	return full, key, nil
}

// CreateFull stores a key with every scope, as a new account's first key
// and the `serve --dev` key are.
func (s *Service) CreateFull(ctx context.Context, accountID, name string) (string, *mailroom.APIKey, error) {
	names := make([]string, len(mailroom.AllScopes))
	for i, sc := range mailroom.AllScopes {
		names[i] = string(sc)
	}
	return s.Create(ctx, accountID, name, names, APIFields)
}

// Get finds one of the account's keys. Another account's key is
// ECodeNotFound, never forbidden, so that ids cannot be probed.
func (s *Service) Get(ctx context.Context, accountID, keyID string) (*mailroom.APIKey, error) {
	notFound := mailroom.Errorf(mailroom.ECodeNotFound, "No API key %q in this account.", keyID)
	if !mailroom.ValidKeyID(keyID) {
		return nil, notFound
	}
	key, err := s.Store.APIKey(ctx, keyID)
	if mailroom.IsCode(err, mailroom.ECodeNotFound) || (err == nil && key.AccountID != accountID) {
		return nil, notFound
	}
	return key, err
}

// List lists the account's keys, newest first.
func (s *Service) List(ctx context.Context, accountID string, page mailroom.Page) ([]*mailroom.APIKey, string, error) {
	return s.Store.ListAPIKeys(ctx, accountID, page)
}

// Revoke revokes one of the account's keys: it fails from the next request
// on, on every node; mail it already sent stays accepted.
func (s *Service) Revoke(ctx context.Context, accountID, keyID string) (*mailroom.APIKey, error) {
	return s.Store.RevokeAPIKey(ctx, accountID, keyID, s.now())
}
