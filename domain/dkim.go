package domain

import (
	"context"

	"github.com/mailroom/mailroom"
)

// RotateDKIM starts a rotation of an account's domain's DKIM key (POST
// /v1/domains/{domain}/dkim/rotate): a new RSA key under a new selector,
// sealed like the domain's first key, whose record the customer publishes
// beside the active one. Signing moves to it when a check finds that
// record (mailroom.SettleDKIMKeys, in every check: POST …/verify and the
// scheduled re-checks); the domain's status does not change meanwhile.
// The key is made (tens of milliseconds) before the store's transaction,
// which refuses a domain with a rotation pending (ECodeInvalidState).
func (s *Service) RotateDKIM(ctx context.Context, accountID, rawName string) (*mailroom.Domain, error) {
	name, err := mailroom.NormalizeDomainName(rawName)
	if err != nil {
		return nil, mailroom.Errorf(mailroom.ECodeNotFound, "No domain %q in this account.", mailroom.Excerpt(rawName, 256))
	}
	d, err := s.Store.Domain(ctx, accountID, name)
	if err != nil {
		return nil, err
	}
	if s.Sandbox != "" && name == s.Sandbox {
		// Never looked up in DNS (Verify answers it as it is): a new
		// key's record could never be found, and signing never move.
		return nil, mailroom.Errorf(mailroom.ECodeInvalidState, "The sandbox domain %s is not looked up in DNS, so its DKIM key cannot rotate; rotate the key of a domain of your own.", name)
	}
	if p := d.DKIMKeyOf(mailroom.DKIMKeyPending); p != nil {
		// The store refuses it as well; asking first spares a key.
		return nil, mailroom.RotateDKIM(d, *p)
	}
	now := s.now().UTC()
	selector, private, public, err := mailroom.NewDKIMKey(now)
	if err != nil {
		return nil, err
	}
	next := mailroom.DomainDKIMKey{
		Selector:         selector,
		PublicKey:        public,
		PrivateKeySealed: s.Sealer.Seal(private, []byte(d.ID)),
		CreatedAt:        now,
	}
	d, err = s.Store.RotateDomainDKIM(ctx, accountID, name, next)
	s.statuses.forget(accountID, name)
	return d, err
}

// newEd25519Key makes a sealed Ed25519 key for d (RFC 8463).
func (s *Service) newEd25519Key(d *mailroom.Domain) (*mailroom.DomainDKIMKey, error) {
	now := s.now().UTC()
	selector, private, public, err := mailroom.NewDKIMEd25519Key(now)
	if err != nil {
		return nil, err
	}
	return &mailroom.DomainDKIMKey{
		Role:             mailroom.DKIMKeyEd25519,
		Selector:         selector,
		PublicKey:        public,
		PrivateKeySealed: s.Sealer.Seal(private, []byte(d.ID)),
		CreatedAt:        now,
	}, nil
}

// DKIMKey opens d's sealed private keys into the key that signs its mail:
// the active RSA key, and beside it the Ed25519 key once its record is
// verified (mailroom.Domain.SigningEd25519Key), so that the mail carries
// both signatures (RFC 8463 §3).
func (s *Service) DKIMKey(d *mailroom.Domain) (mailroom.DKIMKey, error) {
	private, err := s.Sealer.Open(d.DKIMPrivateKeySealed, []byte(d.ID))
	if err != nil {
		return mailroom.DKIMKey{}, err
	}
	key := mailroom.DKIMKey{Domain: d.Name, Selector: d.DKIMSelector, PrivateKeyPKCS8: private}
	if ed := d.SigningEd25519Key(); ed != nil {
		private, err := s.Sealer.Open(ed.PrivateKeySealed, []byte(d.ID))
		if err != nil {
			return mailroom.DKIMKey{}, err
		}
		key.Also = []mailroom.DKIMKey{{Domain: d.Name, Selector: ed.Selector, PrivateKeyPKCS8: private}}
	}
	return key, nil
}
