package domain

import (
	"context"

	"github.com/mailroom/mailroom"
)

// FindDomain reads the account's domain that idOrName names: its id, as
// the create answered it (dom_…, what Resend's routes address a domain
// by), or its name in any case (what /v1 and the command line address it
// by). The two never meet: a name has no "_" (NormalizeDomainName), an id
// always has one. Anything else, and another account's domain, is
// ECodeNotFound.
func (s *Service) FindDomain(ctx context.Context, accountID, idOrName string) (*mailroom.Domain, error) {
	if mailroom.IsID(idOrName, mailroom.PrefixDomain) {
		return s.Store.DomainByID(ctx, accountID, idOrName)
	}
	name, err := mailroom.NormalizeDomainName(idOrName)
	if err != nil {
		return nil, mailroom.Errorf(mailroom.ECodeNotFound, "No domain %q in this account.", mailroom.Excerpt(idOrName, 256))
	}
	return s.Store.Domain(ctx, accountID, name)
}
