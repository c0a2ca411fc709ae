package mailroom

import "strings"

// DefaultReturnPathLabel is the bounce subdomain's label: the envelope sender
// of a domain's mail is <token>@bounces.<domain>.
const DefaultReturnPathLabel = "bounces"

// returnPathMXPriority is the preference of the return-path MX record. Any
// value works with a single MX; 10 is what DNS providers' forms suggest.
const returnPathMXPriority = 10

// RecordSettings are the operator's choices that shape the records every
// customer publishes.
type RecordSettings struct {
	// SPFInclude is the SPF mechanism list that authorises this service's
	// sending hosts, such as "a:mail.example.net" or
	// "ip4:192.0.2.0/24 include:_spf.example.net". The record published is
	// "v=spf1 <SPFInclude> -all".
	SPFInclude string
	// MXHost receives the bounces: the return-path MX points at it.
	MXHost string
	// ReturnPathLabel is the bounce subdomain's label; empty means
	// DefaultReturnPathLabel.
	ReturnPathLabel string
}

// DefaultRecordSettings are the settings of a single-host installation: the
// service sends from and receives bounces at hostname (its --hostname).
func DefaultRecordSettings(hostname string) RecordSettings {
	host := strings.TrimSuffix(strings.ToLower(strings.TrimSpace(hostname)), ".")
	return RecordSettings{SPFInclude: "a:" + host, MXHost: host, ReturnPathLabel: DefaultReturnPathLabel}
}

// ReturnPathDomain is the bounce subdomain of domain, the envelope sender's
// domain on which SPF is checked (RFC 7208 §2.4) and bounces return.
func (s RecordSettings) ReturnPathDomain(domain string) string {
	label := s.ReturnPathLabel
	if label == "" {
		label = DefaultReturnPathLabel
	}
	return label + "." + domain
}

// SPFRecordValue is the SPF record published on the bounce subdomain. It ends
// in -all: the subdomain sends only through this service (RFC 7208 §5.1).
func (s RecordSettings) SPFRecordValue() string {
	mechanisms := strings.TrimSpace(s.SPFInclude)
	if mechanisms == "" && s.MXHost != "" {
		mechanisms = "a:" + s.MXHost
	}
	if mechanisms == "" {
		return "v=spf1 -all"
	}
	return "v=spf1 " + mechanisms + " -all"
}

// BuildDomainRecords returns the records a customer publishes for d, each
// pending, with names fully qualified and without the trailing dot, and
// values exactly as they go into a DNS provider's form. d must have its DKIM
// key; d.ReturnPathDomain is used when set, else it follows from s.
//
// Only DMARC is optional: receivers accept mail without it, but it is what
// lets the domain's owner see and later forbid spoofing (RFC 7489 §6.3).
func BuildDomainRecords(d *Domain, s RecordSettings) []DNSRecord {
	returnPath := d.ReturnPathDomain
	if returnPath == "" {
		returnPath = s.ReturnPathDomain(d.Name)
	}
	priority := returnPathMXPriority
	mxHost := strings.TrimSuffix(strings.ToLower(s.MXHost), ".")
	return []DNSRecord{
		{
			Purpose:  PurposeDKIM,
			Type:     "TXT",
			Name:     d.DKIMSelector + "._domainkey." + d.Name, // RFC 6376 §3.6.2.1
			Value:    DKIMRecordValue(d.DKIMPublicKey),
			Required: true,
			Status:   RecordPending,
		},
		{
			Purpose:  PurposeSPF,
			Type:     "TXT",
			Name:     returnPath,
			Value:    s.SPFRecordValue(),
			Required: true,
			Status:   RecordPending,
		},
		{
			Purpose:  PurposeReturnPath,
			Type:     "MX",
			Name:     returnPath,
			Value:    mxHost,
			Priority: &priority,
			Required: true,
			Status:   RecordPending,
		},
		{
			Purpose:  PurposeDMARC,
			Type:     "TXT",
			Name:     "_dmarc." + d.Name, // RFC 7489 §6.1
			Value:    "v=DMARC1; p=none;",
			Required: false,
			Status:   RecordPending,
		},
	}
}
