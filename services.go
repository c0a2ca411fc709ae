package mailroom

import "context"

// The interfaces below are what one feature package asks of another's
// service. Feature packages import only this package and leaf utilities,
// never each other (scripts/test checks it); cmd/mailroom hands each the
// other's service through these.

// SendingDomains is what sending, SMTP submission and delivery ask of the
// domains service (package domain).
type SendingDomains interface {
	// CheckSendingDomain answers nil when the account may send from the
	// domain name now, ECodeDomainNotVerified when it may not.
	CheckSendingDomain(ctx context.Context, accountID, name string) error
	// SendingDomain reads the account's domain, ECodeNotFound when it has
	// none of that name.
	SendingDomain(ctx context.Context, accountID, name string) (*Domain, error)
	// DKIMKey opens d's sealed private key into the key that signs its mail.
	DKIMKey(d *Domain) (DKIMKey, error)
	// ReturnPathDomain is the bounce subdomain of a sending domain.
	ReturnPathDomain(name string) string
}
