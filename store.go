package mailroom

import (
	"context"
	"time"
)

// Store is the storage of the whole service. Two implementations exist
// (SQLite and PostgreSQL, both in package sqlstore) and one conformance suite
// (package storetest) holds them to the same behaviour.
//
// Methods return *Error values with ECodeNotFound, ECodeAlreadyExists or
// ECodeUnavailable where those apply; any other error is a bug.
type Store interface {
	AccountStore
	APIKeyStore
	DomainStore
	EventStore
	MessageStore
	NodeStore
	TemplateStore
	WebhookStore
	ReportStore
	SiteSuspensionStore
	MTASTSPolicyStore
	TLSReportStore
	AuditStore
	ReceivedStore
	EngagementStore

	// Ping reports whether storage answers (GET /readyz).
	Ping(ctx context.Context) error
	Close() error
}

// AccountStore keeps accounts.
type AccountStore interface {
	CreateAccount(ctx context.Context, a *Account) error
	AccountByID(ctx context.Context, id string) (*Account, error)
	AccountByName(ctx context.Context, name string) (*Account, error)
	ListAccounts(ctx context.Context) ([]*Account, error)
	// UpdateAccountLimits sets the request rate (per second) and burst of
	// the account named name and returns the account; an unknown name is
	// ECodeNotFound. Callers validate with ValidateRateLimit first.
	UpdateAccountLimits(ctx context.Context, name string, rate float64, burst int) (*Account, error)
}

// APIKeyStore keeps API keys.
type APIKeyStore interface {
	CreateAPIKey(ctx context.Context, k *APIKey) error
	// APIKey finds a key by id, revoked or not.
	APIKey(ctx context.Context, keyID string) (*APIKey, error)
	// ListAPIKeys lists an account's keys newest first.
	ListAPIKeys(ctx context.Context, accountID string, page Page) ([]*APIKey, string, error)
	// RevokeAPIKey marks the key keyID of the account accountID revoked at
	// the given time. Revoking a revoked key changes nothing and returns it
	// as it is. A key of another account is ECodeNotFound, as an unknown
	// one is, and stays as it was: whoever acts for one account (an API
	// caller, an operator's `keys revoke --account`) can neither revoke
	// nor probe another's keys.
	RevokeAPIKey(ctx context.Context, accountID, keyID string, at time.Time) (*APIKey, error)
	// TouchAPIKeys records when keys were last used; an older time never
	// replaces a newer one, so nodes may flush in any order.
	TouchAPIKeys(ctx context.Context, lastUsed map[string]time.Time) error
}

// DomainStore keeps sending domains.
type DomainStore interface {
	// CreateDomain inserts d if its account has fewer than max domains
	// (else DomainLimit's refusal), counted so that concurrent creates cannot pass
	// max together; a name the account already has is ECodeAlreadyExists.
	CreateDomain(ctx context.Context, d *Domain, max int) error
	// CountDomains is how many domains an account has: the cheap check
	// before a DKIM key is made for a domain that would be refused.
	CountDomains(ctx context.Context, accountID string) (int, error)
	// Domain finds an account's domain by its normalised name.
	Domain(ctx context.Context, accountID, name string) (*Domain, error)
	// DomainByID finds an account's domain by its id (dom_…); another
	// account's is ECodeNotFound.
	DomainByID(ctx context.Context, accountID, id string) (*Domain, error)
	// DomainStatus is the status alone of an account's domain: what the
	// send path needs, in one indexed read of one column.
	// With it comes the domain's Tracking, which an accepted send
	// resolves its own tracking from.
	DomainStatus(ctx context.Context, accountID, name string) (DomainStatus, Tracking, error)
	// ListDomains lists an account's domains newest first.
	ListDomains(ctx context.Context, accountID string, page Page) ([]*Domain, string, error)
	DeleteDomain(ctx context.Context, accountID, name string) error
	// UpdateDomain applies u to an account's domain and returns the domain
	// as it now is; an empty u changes nothing and returns it. An unknown
	// domain is ECodeNotFound. Callers validate u first (package domain's
	// Update).
	UpdateDomain(ctx context.Context, accountID, name string, u DomainUpdate) (*Domain, error)
	// SaveDomainCheck stores the outcome of a check (records, status and
	// times of d) and releases its lease; when event is not nil it is
	// written in the same transaction. A domain deleted meanwhile is
	// ECodeNotFound.
	//
	// The DKIM keys are settled again under the row's lock from the keys
	// stored now (SettleDKIMKeys with d.LastCheckedAt), so that a rotation
	// or an Ed25519 change made while the check ran is kept.
	SaveDomainCheck(ctx context.Context, d *Domain, event *Event) error
	// RotateDomainDKIM adds next as the pending DKIM key of an account's
	// domain (RotateDKIM: ECodeInvalidState when one is pending already),
	// in one transaction, and returns the domain as it now is. An unknown
	// domain is ECodeNotFound.
	RotateDomainDKIM(ctx context.Context, accountID, name string, next DomainDKIMKey) (*Domain, error)
	// ClaimDueDomains leases up to limit domains whose next check is due at
	// now and that no live lease holds, so that nodes sharing storage never
	// check one domain at once; a lease that expires (its node died) lets
	// the domain be claimed again.
	ClaimDueDomains(ctx context.Context, now time.Time, lease time.Duration, limit int) ([]*Domain, error)
}

// EventStore reads events.
type EventStore interface {
	// ListEvents lists an account's events newest first.
	ListEvents(ctx context.Context, accountID string, f EventFilter, page Page) ([]*Event, string, error)
	// Event finds one of an account's events.
	Event(ctx context.Context, accountID, id string) (*Event, error)
}

// Page selects one page of a list: at most Limit items after Cursor, which
// is the opaque nextCursor of the previous page ("" for the first).
type Page struct {
	Limit  int
	Cursor string
}

// Paging limits of docs/api.md "Conventions".
const (
	DefaultPageLimit = 20
	MaxPageLimit     = 100
)
