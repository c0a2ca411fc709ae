package resend

import (
	"strings"

	"github.com/mailroom/mailroom"
)

// Domain is a sending domain as Resend's domain routes answer it
// (https://resend.com/docs/api-reference/domains/get-domain).
type Domain struct {
	Object    string         `json:"object"` // "domain"
	ID        string         `json:"id"`     // Mailroom's dom_… id: every route takes it, or the name
	Name      string         `json:"name"`
	Status    string         `json:"status"`
	Region    string         `json:"region"`
	Records   []DomainRecord `json:"records"`
	CreatedAt string         `json:"created_at"`
	// Capabilities say what the domain may do now: sending while its
	// status lets mail leave (mailroom.DomainStatus.CanSend); receiving
	// is not done yet.
	Capabilities DomainCapabilities `json:"capabilities"`
}

// DomainCapabilities are Resend's "enabled" or "disabled" per capability.
type DomainCapabilities struct {
	Sending   string `json:"sending"`
	Receiving string `json:"receiving"`
}

// CreatedDomain answers POST /domains: the domain, with its creation time
// also under createdAt, the name Resend's Go SDK (v3
// CreateDomainResponse) reads it by.
type CreatedDomain struct {
	Domain
	CreatedAtForGoSDK string `json:"createdAt"`
}

// DomainRecord is one record to publish as Resend shows it.
type DomainRecord struct {
	// Record is what the record is for, in Resend's labels: "DKIM",
	// "SPF" (both the SPF TXT and the return-path MX, as Resend labels
	// its own), "DMARC".
	Record string `json:"record"`
	// Name is relative to the domain, as Resend shows it and DNS
	// providers' forms take it ("bounces", "mr1._domainkey").
	Name   string `json:"name"`
	Type   string `json:"type"`
	TTL    string `json:"ttl"` // "Auto": Mailroom asks for no TTL
	Status string `json:"status"`
	Value  string `json:"value"`
	// Priority is an MX record's preference; absent for TXT.
	Priority *int `json:"priority,omitempty"`
}

// DomainList answers GET /domains.
type DomainList struct {
	Object  string   `json:"object"` // "list"
	HasMore bool     `json:"has_more"`
	Data    []Domain `json:"data"`
}

// DomainRef answers POST /domains/{id}/verify: the domain named.
type DomainRef struct {
	Object string `json:"object"` // "domain"
	ID     string `json:"id"`
}

// DeletedDomain answers DELETE /domains/{id}.
type DeletedDomain struct {
	Object  string `json:"object"` // "domain"
	ID      string `json:"id"`
	Deleted bool   `json:"deleted"`
}

// Resend's record labels and the TTL it shows.
const (
	recordDKIM  = "DKIM"
	recordSPF   = "SPF"
	recordDMARC = "DMARC"
	ttlAuto     = "Auto"
)

// statusNotStarted is Resend's status of a domain, or a record, that no
// check has looked at yet.
const statusNotStarted = "not_started"

// ToDomain shows d as Resend does. Its status is Mailroom's (pending,
// verified, failed, temporary_failure, the words Resend uses), or
// not_started while no check has run, as Resend says of a domain just
// added. region is the IP pool its mail leaves from ("default"): Mailroom
// has no regions, and the pool is where its mail leaves from.
func ToDomain(d *mailroom.Domain) Domain {
	out := Domain{
		Object:       "domain",
		ID:           d.ID,
		Name:         d.Name,
		Status:       string(d.Status),
		Region:       d.IPPool,
		Records:      make([]DomainRecord, len(d.Records)),
		CreatedAt:    timestamp(d.CreatedAt),
		Capabilities: DomainCapabilities{Sending: "disabled", Receiving: "disabled"},
	}
	if d.Status.CanSend() {
		out.Capabilities.Sending = "enabled"
	}
	unchecked := d.LastCheckedAt == nil
	if unchecked && d.Status == mailroom.DomainPending {
		out.Status = statusNotStarted
	}
	if out.Region == "" {
		out.Region = "default"
	}
	for i, r := range d.Records {
		out.Records[i] = toDomainRecord(d.Name, r, unchecked)
	}
	return out
}

// ToCreatedDomain is ToDomain for the answer to a create.
func ToCreatedDomain(d *mailroom.Domain) CreatedDomain {
	out := ToDomain(d)
	return CreatedDomain{Domain: out, CreatedAtForGoSDK: out.CreatedAt}
}

func toDomainRecord(domain string, r mailroom.DNSRecord, unchecked bool) DomainRecord {
	out := DomainRecord{
		Record: recordLabel(r.Purpose), Name: relativeName(r.Name, domain), Type: r.Type,
		TTL: ttlAuto, Status: string(r.Status), Value: r.Value, Priority: r.Priority,
	}
	if unchecked && r.Status == mailroom.RecordPending {
		out.Status = statusNotStarted
	}
	return out
}

func recordLabel(p mailroom.RecordPurpose) string {
	switch p {
	case mailroom.PurposeDKIM:
		return recordDKIM
	case mailroom.PurposeSPF, mailroom.PurposeReturnPath:
		return recordSPF
	case mailroom.PurposeDMARC:
		return recordDMARC
	}
	return strings.ToUpper(string(p))
}

// relativeName is name relative to domain ("bounces" for
// bounces.example.com; "@" for the domain itself); a name outside the
// domain stays whole.
func relativeName(name, domain string) string {
	if name == domain {
		return "@"
	}
	if rel, ok := strings.CutSuffix(name, "."+domain); ok {
		return rel
	}
	return name
}

// CreateDomainRequest is the body of POST /domains
// (https://resend.com/docs/api-reference/domains/create-domain). region
// and custom_return_path are Resend's and ignored: Mailroom has no
// regions, and the bounce subdomain is the operator's setting (the
// records in the answer name it).
type CreateDomainRequest struct {
	Name          string `json:"name"`
	TLS           string `json:"tls"`
	OpenTracking  *bool  `json:"open_tracking"`
	ClickTracking *bool  `json:"click_tracking"`
}

// Update is the settings a create sets beside the name, as Mailroom's
// DomainUpdate (domain.Service checks the values).
func (r CreateDomainRequest) Update() (mailroom.DomainUpdate, error) {
	return UpdateDomainRequest{TLS: r.TLS, OpenTracking: r.OpenTracking, ClickTracking: r.ClickTracking}.Update()
}

// UpdateDomainRequest is the body of PATCH /domains/{id}
// (https://resend.com/docs/api-reference/domains/update-domain).
type UpdateDomainRequest struct {
	// TLS is "opportunistic" or "enforced", the words of Mailroom's
	// domain tls; "" or null leaves it.
	TLS           string `json:"tls"`
	OpenTracking  *bool  `json:"open_tracking"`
	ClickTracking *bool  `json:"click_tracking"`
}

// Update is r as Mailroom's DomainUpdate: tls, and open_tracking and
// click_tracking as PATCH /v1/domains/{domain}'s openTracking and
// clickTracking (docs/api.md "Engagement tracking"). A value given sets
// the setting, false included; null or absent leaves it. domain.Service
// checks the values.
func (r UpdateDomainRequest) Update() (mailroom.DomainUpdate, error) {
	u := mailroom.DomainUpdate{OpenTracking: r.OpenTracking, ClickTracking: r.ClickTracking}
	if r.TLS != "" {
		mode := mailroom.TLSMode(r.TLS)
		u.TLS = &mode
	}
	return u, nil
}
