package delivery

import (
	"bytes"
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
//
// Marketing mail is stored unsigned, the part common to every recipient's
// copy, and each copy gets its own RFC 8058 unsubscribe pair and DKIM
// signature when it is sent (Composer.Copies), the same bytes on every
// attempt. So is tracked mail, each copy with an HTML part of its own
// (copies.go).
type Signer struct {
	Store    mailroom.MessageStore
	Domains  mailroom.SendingDomains
	Composer mailroom.Composer
	// Unsubscribe makes the List-Unsubscribe pair of each recipient's copy
	// of marketing mail. Set it before the Signer is used, or later with
	// SetUnsubscribe.
	Unsubscribe mailroom.UnsubscribeLinker
	// Tracker makes the HTML of each recipient's copy of tracked mail
	// (docs/api.md "Engagement tracking"). Set it before the Signer is
	// used, or later with SetTracker.
	Tracker mailroom.Tracker
	// Now is the clock of the domain cache; nil is time.Now.
	Now func() time.Time

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
// a removed domain stops being used within it, and a pool assigned with
// `mailroom domains update --ip-pool`, and a tls set with PATCH
// /v1/domains/{domain}, apply to the attempts started after it (docs/api.md
// "How mail leaves": within 10 s).
const domainCacheTTL = 10 * time.Second

// Signed returns the message ready to be sent: its stored bytes, composed,
// signed and stored first if they are not stored yet, and its return-path
// domain. Stored signed bytes need no domain key: a message signed before
// its domain was removed is still sent (and shown) as it was signed. A
// domain removed before the first attempt is ECodeNotFound, and so is
// each copy of marketing mail whose domain was removed since: its copies
// can no longer be signed. The message leaves from its domain's pool of
// source addresses, or, once the domain is removed, from the default
// pool. It carries the domain's tls (mailroom.Signed.TLSMode), which an
// enforced domain's attempts need (docs/api.md "TLS policy"); a message
// whose domain is gone leaves under no domain setting, opportunistically
// unless the send or the receiver asks for more.
func (s *Signer) Signed(ctx context.Context, sum *mailroom.MessageSummary) (*mailroom.Signed, error) {
	m, raw, err := s.Store.MessageForDelivery(ctx, sum.ID)
	if err != nil {
		return nil, err
	}
	domain, err := s.sendingDomain(ctx, sum.AccountID, sum.Domain)
	switch {
	case err == nil:
	case raw != nil && mailroom.IsCode(err, mailroom.ECodeNotFound):
		out := &mailroom.Signed{Raw: raw, ReturnPath: s.Domains.ReturnPathDomain(sum.Domain)}
		if gone := err; !mailroom.IsSigned(raw) {
			out.Copy = func(string) ([]byte, error) { return nil, gone }
		}
		return out, nil
	default:
		return nil, err
	}
	var copies *copyPlan
	if raw == nil {
		composed, err := s.Compose(m, domain)
		if err != nil {
			return nil, err
		}
		if !mailroom.IsSigned(composed) {
			if copies, err = s.planCopies(sum, composed, domain); err != nil {
				return nil, err
			}
			if err := copies.saveLinks(ctx, s.Store); err != nil {
				return nil, err
			}
		}
		if raw, err = s.Store.SaveRaw(ctx, m.ID, composed); err != nil {
			return nil, err
		}
		if !bytes.Equal(raw, composed) {
			// Another node's bytes won: its copies are made from them.
			copies = nil
		}
	}
	out := &mailroom.Signed{Raw: raw, ReturnPath: domain.ReturnPathDomain, IPPool: domain.IPPool, TLSMode: domain.TLS.OrDefault()}
	if !mailroom.IsSigned(raw) {
		if copies == nil {
			if copies, err = s.planCopies(sum, raw, domain); err != nil {
				return nil, err
			}
		}
		out.Copy = copies.copyFor
	}
	return out, nil
}

// SetUnsubscribe replaces Unsubscribe while the Signer is in use: the
// public URL of `serve --dev` on an ephemeral port is known only once the
// HTTPS listener is up.
func (s *Signer) SetUnsubscribe(l mailroom.UnsubscribeLinker) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.Unsubscribe = l
}

// SetTracker replaces Tracker while the Signer is in use, for the same
// reason as SetUnsubscribe: its links hold the public URL.
func (s *Signer) SetTracker(t mailroom.Tracker) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.Tracker = t
}

// Compose renders m with its domain's DKIM key: signed, or, for mail
// composed per recipient, its unsigned common part.
func (s *Signer) Compose(m *mailroom.Message, domain *mailroom.Domain) ([]byte, error) {
	key, err := s.key(domain)
	if err != nil {
		return nil, err
	}
	return s.Composer.Compose(m, key)
}

func (s *Signer) key(domain *mailroom.Domain) (mailroom.DKIMKey, error) {
	return s.Domains.DKIMKey(domain)
}

// sendingDomain returns the account's domain, from the cache when fresh.
func (s *Signer) sendingDomain(ctx context.Context, accountID, name string) (*mailroom.Domain, error) {
	key := accountID + "/" + name
	now := time.Now()
	if s.Now != nil {
		now = s.Now()
	}
	s.mu.Lock()
	c, ok := s.domains[key]
	s.mu.Unlock()
	if ok && now.Sub(c.fetched) < domainCacheTTL {
		return c.domain, nil
	}
	dom, err := s.Domains.SendingDomain(ctx, accountID, name)
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
