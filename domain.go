package mailroom

import (
	"context"
	"time"
)

// PrefixDomain is the prefix of domains' internal ids.
const PrefixDomain = "dom_"

// Domain is a sending domain of an account (docs/api.md "Domains"). An account may send
// only from a domain whose records it has published and Mailroom has found.
type Domain struct {
	ID        string // "dom_…", internal: the API names a domain by Name
	AccountID string
	// Name is normalised: lower case, A-labels, no trailing dot.
	Name   string
	Status DomainStatus
	// DKIMSelector is unique to the key, so keys can be rotated and two
	// accounts adding one domain never collide (e.g. "mr2611a7f3").
	DKIMSelector string
	// DKIMPublicKey is the base64 DER SubjectPublicKeyInfo: the p= value.
	DKIMPublicKey string
	// DKIMPrivateKeySealed is the PKCS#8 private key encrypted at rest.
	DKIMPrivateKeySealed []byte
	// DKIMKeys are the domain's DKIM keys beside the active RSA key above:
	// the next RSA key of a rotation, the keys rotated away from until
	// their records may go, and the Ed25519 key (dkimrotation.go).
	DKIMKeys []DomainDKIMKey
	// ReturnPathDomain is the envelope sender's domain (bounces.<Name>).
	ReturnPathDomain string
	Records          []DNSRecord
	// Checks are the health checks of the last verification or re-check
	// (domainhealth.go): advice beside Records, never its status. Empty
	// before the first check.
	Checks []HealthCheck
	// IPPool names the pool of source addresses its mail leaves from
	// (--ip-pool); "" is the default pool.
	IPPool string
	// TLS is the domain's requirement of the TLS its mail leaves over;
	// "" reads as TLSOpportunistic (TLSMode.OrDefault).
	TLS TLSMode
	// Receiving says the domain takes mail (docs/api.md "Receiving
	// mail"): its records hold the MX of purpose receiving, and once
	// that verifies the inbound MX accepts every address of it
	// (ReceivesMail).
	Receiving bool
	// Tracking is the domain's openTracking and clickTracking
	// (docs/api.md "Engagement tracking"): off unless turned on, and a
	// send may override either for its message.
	Tracking Tracking

	CreatedAt     time.Time
	VerifiedAt    *time.Time
	LastCheckedAt *time.Time
	NextCheckAt   *time.Time
	// FailingSince is when a verified domain's records were first found
	// missing; it fails for good 72 hours later unless they come back.
	FailingSince *time.Time
}

// DomainStatus is the state of a domain (docs/api.md "Domains").
type DomainStatus string

const (
	DomainPending          DomainStatus = "pending"
	DomainVerified         DomainStatus = "verified"
	DomainFailed           DomainStatus = "failed"
	DomainTemporaryFailure DomainStatus = "temporary_failure"
)

// CanSend reports whether mail may be sent from the domain: verified, or
// verified before and within the grace period of a temporary failure.
func (s DomainStatus) CanSend() bool { return s == DomainVerified || s == DomainTemporaryFailure }

// DNSRecord is one record the customer publishes, and what a check found.
type DNSRecord struct {
	Purpose  RecordPurpose `json:"purpose"`
	Type     string        `json:"type"` // "TXT" or "MX"
	Name     string        `json:"name"`
	Value    string        `json:"value"`
	Priority *int          `json:"priority,omitempty"`
	Required bool          `json:"required"`
	Status   RecordStatus  `json:"status"`
	// Found is what DNS held at the name on the last check (the TXT strings
	// joined per record, or "10 host." for MX), so a customer can see what
	// is wrong. Nil before the first check.
	Found []string `json:"found,omitempty"`
	// Problem says in words why the record is not verified, or why the
	// last check could not decide (a DNS timeout keeps the old status).
	Problem string `json:"problem,omitempty"`
	// RemovableAfter is set on the record of a DKIM key that no longer
	// signs (rotated away from): from then on the customer may delete it.
	RemovableAfter *time.Time `json:"removableAfter,omitempty"`
}

// RecordPurpose says what a record is for.
type RecordPurpose string

const (
	PurposeDKIM       RecordPurpose = "dkim"
	PurposeSPF        RecordPurpose = "spf"
	PurposeReturnPath RecordPurpose = "return_path"
	PurposeDMARC      RecordPurpose = "dmarc"
)

// RecordStatus is a record's state after the last check.
type RecordStatus string

const (
	RecordPending  RecordStatus = "pending"
	RecordVerified RecordStatus = "verified"
	RecordFailed   RecordStatus = "failed"
)

// Domain event types, written in the same transaction as the state change
// they describe, and delivered by the webhooks.
const (
	EventDomainVerified         = "domain.verified"
	EventDomainFailed           = "domain.failed"
	EventDomainTemporaryFailure = "domain.temporary_failure"
)

// DomainCheck is the outcome of looking up a domain's records in DNS.
type DomainCheck struct {
	// Records are the domain's records with Status, Found and Problem
	// brought up to date.
	Records []DNSRecord
	// Indeterminate is true when some record could not be checked (a DNS
	// timeout, SERVFAIL, REFUSED): that record keeps its previous Status and
	// Found, and its Problem says why. It is not a failure of the record.
	Indeterminate bool
}

// DomainChecker looks up a domain's records in DNS (package dns). It does
// not modify d. An error means the result says nothing and must not be
// saved (the checker is misconfigured, or ctx ended).
type DomainChecker interface {
	Check(ctx context.Context, d *Domain) (DomainCheck, error)
}

// Sealer encrypts secrets at rest (package sealer). associatedData binds a
// sealed value to the row it belongs to, so a value copied to another row
// does not open.
type Sealer interface {
	Seal(plaintext, associatedData []byte) []byte
	Open(sealed, associatedData []byte) ([]byte, error)
}
