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
	// Domains finds the domain a new key is restricted to (NewKey.Domain);
	// nil refuses such keys.
	Domains mailroom.AccountDomains
	// Now is the clock; nil means time.Now.
	Now func() time.Time
}

// Fields names a create's fields in the problems it reports, as the
// caller's surface calls them.
type Fields struct{ Name, Scopes, Domain string }

// APIFields are the fields of POST /v1/api-keys.
var APIFields = Fields{Name: "name", Scopes: "scopes", Domain: "domain"}

// NewKey is a key to create, as the client gave it.
type NewKey struct {
	Name   string
	Scopes []string
	// Domain, when set, restricts the key to sending from that one domain
	// of the account (mailroom.APIKey.Domain), named by its id or its
	// name. Such a key holds the send scope and not the keys scope: a key
	// that may create keys could make itself an unrestricted one.
	Domain string
}

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
func CheckNew(n NewKey, f Fields) (mailroom.Scopes, error) {
	var v mailroom.Validator
	mailroom.ValidateKeyName(&v, f.Name, n.Name)
	ss := mailroom.ParseScopes(&v, f.Scopes, n.Scopes)
	if n.Domain != "" && v.Err() == nil {
		switch {
		case !ss.Has(mailroom.ScopeSend):
			v.Add(f.Domain, "restricts what the key sends, and the key has no %q scope", mailroom.ScopeSend)
		case ss.Has(mailroom.ScopeKeys):
			v.Add(f.Domain, "cannot restrict a key with the %q scope, which could create an unrestricted key", mailroom.ScopeKeys)
		case ss.Has(mailroom.ScopeReceive):
			// Received mail is the account's, of all its receiving
			// domains: a key kept to one domain must not read the rest.
			v.Add(f.Domain, "cannot restrict a key with the %q scope, which reads the mail of every receiving domain of the account", mailroom.ScopeReceive)
		}
	}
	return ss, v.Err()
}

// Create validates a new key of the account (CheckNew), finds the domain
// it is restricted to, if any, and stores it. full is the key itself,
// which exists nowhere else: only its digest is stored.
func (s *Service) Create(ctx context.Context, accountID string, n NewKey, f Fields) (full string, key *mailroom.APIKey, err error) {
	ss, err := CheckNew(n, f)
	if err != nil {
		return "", nil, err
	}
	domain, err := s.restriction(ctx, accountID, n.Domain, f)
	if err != nil {
		return "", nil, err
	}
	full, key = mailroom.NewAPIKey(accountID, n.Name, ss, s.now())
	key.Domain = domain
	if err := s.Store.CreateAPIKey(ctx, key); err != nil {
		return "", nil, err
	}
	return full, key, nil
}

// restriction is the name of the account's domain idOrName names ("" for
// none): the key keeps the name, which its sends are compared with. A
// domain the account lacks is a problem of the request's field, not a
// missing route.
func (s *Service) restriction(ctx context.Context, accountID, idOrName string, f Fields) (string, error) {
	if idOrName == "" {
		return "", nil
	}
	if s.Domains == nil {
		return "", mailroom.Errorf(mailroom.ECodeInternal, "apikey: Service.Domains is not set")
	}
	d, err := s.Domains.FindDomain(ctx, accountID, idOrName)
	if mailroom.IsCode(err, mailroom.ECodeNotFound) {
		var v mailroom.Validator
		v.Add(f.Domain, "names no domain of this account (%q); give the id or the name of one", mailroom.Excerpt(idOrName, 256))
		return "", v.Err()
	}
	if err != nil {
		return "", err
	}
	return d.Name, nil
}

// CreateFull stores a key with every scope, as a new account's first key
// and the `serve --dev` key are.
func (s *Service) CreateFull(ctx context.Context, accountID, name string) (string, *mailroom.APIKey, error) {
	names := make([]string, len(mailroom.AllScopes))
	for i, sc := range mailroom.AllScopes {
		names[i] = string(sc)
	}
	return s.Create(ctx, accountID, NewKey{Name: name, Scopes: names}, APIFields)
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
