package delivery

import (
	"context"
	"sync"
	"time"

	"github.com/mailroom/mailroom"
)

// Signer makes a message's signed bytes once: the first attempt composes
// and DKIM-signs it and stores the bytes (the first stored bytes win, if
// two nodes race), and every later attempt, and the log's raw view, use the
// stored bytes, so that the Message-ID and signature never change
// (docs/design.md "How a message travels").
type Signer struct {
	Store    mailroom.MessageStore
	Domains  *mailroom.Domains
	Composer mailroom.Composer

	// domains caches sending domains briefly: every message of a domain
	// needs its key and return path, and re-reading the row (with its
	// records) for each one cost more than signing.
	mu      sync.Mutex
	domains map[string]cachedDomain
}

var _ mailroom.Signer = (*Signer)(nil)

type cachedDomain struct {
	domain  *mailroom.Domain
	fetched time.Time
}

// domainCacheTTL bounds how long a worker signs with a domain row it read:
// a removed domain stops being used within it.
const domainCacheTTL = 30 * time.Second

// Signed returns the message's stored signed bytes, composing, signing and
// storing them first if they are not stored yet, and its return-path
// domain. Stored bytes need no domain key: a message signed before its
// domain was removed is still sent (and shown) as it was signed. A domain
// removed before the first attempt is ECodeNotFound.
func (s *Signer) Signed(ctx context.Context, sum *mailroom.MessageSummary) ([]byte, string, error) {
	m, raw, err := s.Store.MessageForDelivery(ctx, sum.ID)
	if err != nil {
		return nil, "", err
	}
	domain, err := s.sendingDomain(ctx, sum.AccountID, sum.Domain)
	switch {
	case err == nil:
	case raw != nil && mailroom.IsCode(err, mailroom.ECodeNotFound):
		return raw, s.Domains.Settings.ReturnPathDomain(sum.Domain), nil
	default:
		return nil, "", err
	}
	if raw != nil {
		return raw, domain.ReturnPathDomain, nil
	}
	raw, err = s.Compose(m, domain)
	if err != nil {
		return nil, "", err
	}
	raw, err = s.Store.SaveRaw(ctx, m.ID, raw)
	return raw, domain.ReturnPathDomain, err
}

// Compose renders and signs m with its domain's DKIM key.
func (s *Signer) Compose(m *mailroom.Message, domain *mailroom.Domain) ([]byte, error) {
	key, err := s.Domains.DKIMPrivateKey(domain)
	if err != nil {
		return nil, err
	}
	return s.Composer.Compose(m, mailroom.DKIMKey{Domain: domain.Name, Selector: domain.DKIMSelector, PrivateKeyPKCS8: key})
}

// sendingDomain returns the account's domain, from the cache when fresh.
func (s *Signer) sendingDomain(ctx context.Context, accountID, name string) (*mailroom.Domain, error) {
	key := accountID + "/" + name
	now := time.Now()
	s.mu.Lock()
	c, ok := s.domains[key]
	s.mu.Unlock()
	if ok && now.Sub(c.fetched) < domainCacheTTL {
		return c.domain, nil
	}
	dom, err := s.Domains.Store.Domain(ctx, accountID, name)
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	if s.domains == nil {
		s.domains = map[string]cachedDomain{}
	}
	s.domains[key] = cachedDomain{domain: dom, fetched: now}
	s.mu.Unlock()
	return dom, nil
}
