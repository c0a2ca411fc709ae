package domain

import (
	"context"

	"github.com/mailroom/mailroom"
)

// Update changes an account's domain's settings (PATCH
// /v1/domains/{domain}, `mailroom domains update`): each field of u that is
// set, after checking every one of them, so that a request with two
// mistakes hears of both and changes nothing. An empty u answers the
// domain as it is. Running nodes apply a new tls or IP pool to the
// attempts they start once their delivery Signer reads the domain again
// (within 10 s: the Signer caches a domain row that long). A new
// openTracking or clickTracking applies to the sends accepted after: on
// this node at once.
func (s *Service) Update(ctx context.Context, accountID, rawName string, u mailroom.DomainUpdate) (*mailroom.Domain, error) {
	if err := checkUpdate(u); err != nil {
		return nil, err
	}
	name, err := mailroom.NormalizeDomainName(rawName)
	if err != nil {
		return nil, mailroom.Errorf(mailroom.ECodeNotFound, "No domain %q in this account.", mailroom.Excerpt(rawName, 256))
	}
	if u.DKIMEd25519 != nil && *u.DKIMEd25519 && u.Ed25519Key == nil {
		// The key is made before the store's transaction, and only for
		// a domain that has none: the store keeps an existing one.
		d, err := s.Store.Domain(ctx, accountID, name)
		if err != nil {
			return nil, err
		}
		if d.DKIMKeyOf(mailroom.DKIMKeyEd25519) == nil {
			if u.Ed25519Key, err = s.newEd25519Key(d); err != nil {
				return nil, err
			}
		}
	}
	if u.Receiving != nil && *u.Receiving {
		// The MX the domain publishes to receive, at the domain itself,
		// pointing at this service's MX host (--mx-host).
		rec := mailroom.ReceivingRecord(name, s.Settings)
		u.ReceivingRecord = &rec
	}
	d, err := s.Store.UpdateDomain(ctx, accountID, name, u)
	if err == nil && (u.OpenTracking != nil || u.ClickTracking != nil) {
		// The sending-domain check caches the domain's tracking with its
		// status: a send accepted on this node right after the change
		// follows it (other nodes: within SendingDomainCacheTTL).
		s.statuses.forget(accountID, name)
	}
	return d, err
}

// checkUpdate checks every field of u that is set, so that a request
// with two mistakes hears of both.
func checkUpdate(u mailroom.DomainUpdate) error {
	var v mailroom.Validator
	if u.TLS != nil {
		if _, ok := mailroom.ParseTLSMode(string(*u.TLS)); !ok {
			v.Add("tls", `must be "opportunistic" (the default: STARTTLS when the receiver offers it) or "enforced" (verified TLS on every delivery), not %q`, string(*u.TLS))
		}
	}
	if u.IPPool != nil && *u.IPPool != "" && !mailroom.ValidIPPoolName(*u.IPPool) {
		v.Add("ipPool", "%q is not an IP pool name: letters, digits, '-' and '_', at most 64 (\"\" for the default pool)", *u.IPPool)
	}
	return v.Err()
}
