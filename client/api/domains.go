package api

import "time"

// DomainStatus is a sending domain's state (docs/api.md "Domains").
type DomainStatus string

const (
	DomainPending          DomainStatus = "pending"           // waiting for its records
	DomainVerified         DomainStatus = "verified"          // every required record found: it may send
	DomainTemporaryFailure DomainStatus = "temporary_failure" // a required record went missing; still sends for 72 h
	DomainFailed           DomainStatus = "failed"            // may not send; POST …/verify brings it back
)

// RecordPurpose says what a DNS record is for.
type RecordPurpose string

const (
	PurposeDKIM       RecordPurpose = "dkim"
	PurposeSPF        RecordPurpose = "spf"
	PurposeReturnPath RecordPurpose = "return_path"
	PurposeDMARC      RecordPurpose = "dmarc"
	// PurposeReceiving is a receiving domain's MX (docs/api.md "Receiving
	// mail"): required to receive mail, not to send.
	PurposeReceiving RecordPurpose = "receiving"
)

// RecordStatus is a DNS record's state after the last check.
type RecordStatus string

const (
	RecordPending  RecordStatus = "pending"
	RecordVerified RecordStatus = "verified"
	RecordFailed   RecordStatus = "failed"
)

// DomainCreateRequest is the body of POST /v1/domains (OpenAPI schema
// DomainCreateRequest).
type DomainCreateRequest struct {
	// Name is the domain, such as example.com; IDNs are stored as A-labels.
	Name string `json:"name"`
}

// Domain is a sending domain (OpenAPI schema Domain), as every route under
// /v1/domains answers it.
type Domain struct {
	Name    string       `json:"name"`
	Status  DomainStatus `json:"status"`
	Records []DNSRecord  `json:"records"`
	// The times are null until they happen; NextCheckAt is null when no
	// automatic check is due (a failed domain).
	CreatedAt     time.Time  `json:"createdAt"`
	VerifiedAt    *time.Time `json:"verifiedAt"`
	LastCheckedAt *time.Time `json:"lastCheckedAt"`
	NextCheckAt   *time.Time `json:"nextCheckAt"`
	// IPPool names the pool of source addresses the domain's mail leaves
	// from (docs/api.md "How mail leaves"); null for the default pool. The
	// operator sets it: `mailroom domains update --ip-pool`.
	IPPool *string `json:"ipPool"`
	// TLS is the domain's requirement of the TLS its mail leaves over
	// (docs/api.md "TLS policy"): opportunistic (the default) or enforced.
	TLS DomainTLS `json:"tls"`
	// DKIMEd25519 says whether the domain has an Ed25519 DKIM key (RFC
	// 8463) beside its RSA key: its record is among Records, and once
	// verified the domain's mail carries both signatures.
	DKIMEd25519 bool `json:"dkimEd25519"`
	// Receiving says whether the domain takes mail (docs/api.md
	// "Receiving mail"): its MX of purpose receiving is among Records,
	// and once it is verified (and the domain may send) the inbound MX
	// accepts every address of the domain.
	Receiving bool `json:"receiving"`
	// OpenTracking and ClickTracking are the domain's engagement tracking
	// (docs/api.md "Engagement tracking"), false unless turned on: what
	// the domain's sends are tracked for unless a send's own tracking
	// says otherwise.
	OpenTracking  bool `json:"openTracking"`
	ClickTracking bool `json:"clickTracking"`
	// Checks are the health checks of the last verification or re-check
	// (docs/api.md "Domain health"); empty before the first.
	Checks []DomainHealthCheck `json:"checks"`
}

// DomainTLS is a sending domain's tls setting.
type DomainTLS string

const (
	// DomainTLSOpportunistic: STARTTLS when the receiver offers it, else
	// in clear, unless the receiver's MTA-STS policy or the send requires
	// TLS.
	DomainTLSOpportunistic DomainTLS = "opportunistic"
	// DomainTLSEnforced: every delivery needs STARTTLS with a certificate
	// valid for the MX host; otherwise it is deferred and, after the retry
	// window, fails with reason tls_required.
	DomainTLSEnforced DomainTLS = "enforced"
)

// DomainUpdateRequest is the body of PATCH /v1/domains/{domain} (OpenAPI
// schema DomainUpdateRequest): the settings to change; those left out
// stay as they are.
type DomainUpdateRequest struct {
	TLS *DomainTLS `json:"tls,omitempty"`
	// DKIMEd25519 true adds an Ed25519 DKIM key and its record to
	// publish; false removes them.
	DKIMEd25519 *bool `json:"dkimEd25519,omitempty"`
	// Receiving true makes the domain take mail once its MX record
	// (purpose receiving) verifies; false stops it and removes the
	// record.
	Receiving *bool `json:"receiving,omitempty"`
	// OpenTracking and ClickTracking turn the domain's engagement
	// tracking on or off for the sends accepted after (docs/api.md
	// "Engagement tracking").
	OpenTracking  *bool `json:"openTracking,omitempty"`
	ClickTracking *bool `json:"clickTracking,omitempty"`
}

// DNSRecord is one record to publish, and what the last check found
// (OpenAPI schema DnsRecord).
type DNSRecord struct {
	Purpose RecordPurpose `json:"purpose"`
	// Type is "TXT" or "MX".
	Type string `json:"type"`
	// Name is fully qualified, without the trailing dot.
	Name string `json:"name"`
	// Value is exactly what to paste into the DNS provider's form.
	Value string `json:"value"`
	// Priority is set on MX records only.
	Priority *int `json:"priority,omitempty"`
	// Required is false for DMARC, which is recommended.
	Required bool         `json:"required"`
	Status   RecordStatus `json:"status"`
	// Found is what DNS held at the name on the last check; left out
	// before the first.
	Found []string `json:"found,omitempty"`
	// Problem says why the record is not verified, or why the last check
	// could not decide; left out when there is none.
	Problem string `json:"problem,omitempty"`
	// RemovableAfter is set on the record of a DKIM key that signing has
	// moved away from (a rotation): from then on it may be deleted from
	// DNS; left out on every other record.
	RemovableAfter *time.Time `json:"removableAfter,omitempty"`
}
