package mailroom

import (
	"context"
	"time"
)

// The interfaces below are what one feature package asks of another's
// service. Feature packages import only this package and leaf utilities,
// never each other (scripts/test checks it); cmd/mailroom hands each the
// other's service through these.

// SendingDomains is what sending, SMTP submission and delivery ask of the
// domains service (package domain).
type SendingDomains interface {
	// CheckSendingDomain answers nil when the account may send from the
	// domain name now, ECodeDomainNotVerified when it may not.
	// The domain's Tracking comes with a nil answer: what an accepted
	// send resolves its own from.
	CheckSendingDomain(ctx context.Context, accountID, name string) (Tracking, error)
	// SendingDomain reads the account's domain, ECodeNotFound when it has
	// none of that name.
	SendingDomain(ctx context.Context, accountID, name string) (*Domain, error)
	// DKIMKey opens d's sealed private key into the key that signs its mail.
	DKIMKey(d *Domain) (DKIMKey, error)
	// ReturnPathDomain is the bounce subdomain of a sending domain.
	ReturnPathDomain(name string) string
}

// EnvelopeSenders makes each delivery's envelope sender, a VERP token on
// the domain's bounce subdomain (package inbound's ReturnPaths, which
// opens the token again when a report comes back).
type EnvelopeSenders interface {
	// EnvelopeSender is the MAIL FROM of one SMTP transaction of a
	// message to recipients, at returnPath. The recipients are those of
	// that one transaction, at one domain: the token covers them (and
	// the message's other recipients at their domain) and no other, so
	// a caller must not reuse it for another transaction.
	EnvelopeSender(messageID, returnPath string, recipients []string) string
}

// MailUnsubscribes takes the mail sent to marketing messages' mailto
// unsubscribe addresses (RFC 2369 List-Unsubscribe), which arrive at the
// bounce subdomains beside the reports (package unsubscribe).
type MailUnsubscribes interface {
	// IsUnsubscribeLocalPart says whether a local part has the form of a
	// mailto unsubscribe address: mail to it is a request, not a report.
	IsUnsubscribeLocalPart(localPart string) bool
	// UnsubscribeByMail applies the request that mail to localPart is;
	// ok is false when the address does not verify.
	UnsubscribeByMail(ctx context.Context, localPart string) (u Unsubscribe, ok bool, err error)
}

// KeyAuthenticator checks API keys as the HTTP API does (package apikey's
// Authenticator): what SMTP submission asks of it.
type KeyAuthenticator interface {
	// Authenticate returns the key that token names, or
	// ECodeInvalidAPIKey or ECodeAPIKeyRevoked.
	Authenticate(ctx context.Context, token string) (*APIKey, error)
	// Recheck reads key again for a session that outlives its
	// authentication, with the same answers.
	Recheck(ctx context.Context, key *APIKey) error
}

// TemplateRenderer renders the template a send names (package template's
// Service): what sending asks of templates.
type TemplateRenderer interface {
	// ForSend renders the account's template idOrName with variables,
	// giving up at renderBy; problems with the variables are the
	// RenderedTemplate's, not an error.
	ForSend(ctx context.Context, accountID, idOrName string, variables Variables, renderBy time.Time) (*RenderedTemplate, error)
}

// Tracker makes the tracked HTML of each recipient's copy of a tracked
// message (package tracking): what delivery asks of it.
type Tracker interface {
	// Prepare reads the HTML of message messageID once for all its
	// copies, tracked for t.
	Prepare(messageID, html string, t Tracking) (TrackedHTML, error)
}

// TrackedHTML is a message's HTML prepared for its tracked copies.
type TrackedHTML interface {
	// Links are the original addresses of the links a copy's HTML sends
	// through the service, in document order: the message's
	// TrackedLinks, which clicks come back with the index of. Empty when
	// clicks are not tracked.
	Links() []string
	// For returns the HTML of recipient's copy: each link through its
	// click address and the open pixel at its end, with tokens of that
	// recipient. The same recipient always gets the same HTML.
	For(recipient string) (string, error)
}

// UnsubscribeLinker makes the List-Unsubscribe fields of one recipient's
// copy of marketing mail (package unsubscribe's Links).
type UnsubscribeLinker interface {
	// Fields returns the List-Unsubscribe and List-Unsubscribe-Post
	// fields of u's copy, whose envelope sender is at returnPath.
	Fields(u Unsubscribe, returnPath string) ([]Header, error)
}

// AccountDomains finds an account's domain by the id or the name a client
// gave (package domain's Service.FindDomain): what API keys ask of
// domains, to restrict a key to one.
type AccountDomains interface {
	// FindDomain reads the account's domain idOrName names (dom_… or a
	// name in any case), ECodeNotFound when it has none.
	FindDomain(ctx context.Context, accountID, idOrName string) (*Domain, error)
}

// MailReceiver takes mail for receiving domains (package receiving's
// Receiver): what the inbound MX asks of receiving (docs/api.md "Receiving
// mail").
type MailReceiver interface {
	// Accepts says whether the envelope recipient rcpt is at a verified
	// receiving domain of some account, for RCPT: any other domain is
	// refused there (the MX is never a relay).
	Accepts(ctx context.Context, rcpt string) (bool, error)
	// Receive checks one transaction's message as a receiver does and
	// stores it, with its event, for each account its recipients belong
	// to. An ECodeUnavailable error means storage could not take it: the
	// MX answers 451 and the sender tries again.
	Receive(ctx context.Context, in InboundMessage) error
}

// InboundMessage is one SMTP transaction the inbound MX took for
// receiving domains: the client, its envelope and the bytes of DATA.
type InboundMessage struct {
	RemoteIP   string
	Helo       string
	MailFrom   string
	Recipients []string
	Data       []byte
	ReceivedAt time.Time
	// TLS says the transaction ran under TLS (STARTTLS, RFC 3207).
	TLS bool
}
