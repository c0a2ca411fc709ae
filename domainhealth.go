package mailroom

import "context"

// HealthCheck is one piece of advice about a sending domain (docs/api.md
// "Domain health"): what stands between its mail and the inbox beyond the
// required records. Checks are refreshed with each verification and
// re-check, stored with the domain, and never change its status.
type HealthCheck struct {
	Name   HealthCheckName `json:"name"`
	Status HealthStatus    `json:"status"`
	// Detail says what was found and, unless the check passed, what to
	// fix: the record to add, or whom to ask.
	Detail string `json:"detail"`
}

// HealthCheckName names a check; HealthCheckNames lists them in the
// order a domain shows them.
type HealthCheckName string

const (
	// HealthDMARC: the domain publishes a parseable DMARC policy (RFC 7489).
	HealthDMARC HealthCheckName = "dmarc"
	// HealthSPFCoversSending: the SPF record of the envelope sender's
	// domain (the bounce subdomain, RFC 7208 §2.4) allows every address
	// the domain's mail leaves from.
	HealthSPFCoversSending HealthCheckName = "spf_covers_sending_addresses"
	// HealthFCrDNS: each sending address and --hostname has forward-
	// confirmed reverse DNS (RFC 8601 §3 "iprev").
	HealthFCrDNS HealthCheckName = "fcrdns"
	// HealthReturnPathMX: the bounce subdomain's MX names this service's
	// inbound host, so that bounces come back.
	HealthReturnPathMX HealthCheckName = "return_path_mx"
	// HealthMTASTS: the domain publishes an MTA-STS policy (RFC 8461).
	HealthMTASTS HealthCheckName = "mta_sts"
	// HealthTLSRPT: the domain asks for TLS reports (RFC 8460).
	HealthTLSRPT HealthCheckName = "tls_rpt"
	// HealthDNSBL: no sending address is listed on the operator's DNS
	// blocklists (--dnsbl, RFC 5782); absent when none are configured.
	HealthDNSBL HealthCheckName = "dnsbl"
)

// HealthCheckNames is every check in the order a domain shows them.
var HealthCheckNames = []HealthCheckName{HealthDMARC, HealthSPFCoversSending, HealthFCrDNS,
	HealthReturnPathMX, HealthMTASTS, HealthTLSRPT, HealthDNSBL}

// HealthStatus is a check's verdict.
type HealthStatus string

const (
	HealthPass HealthStatus = "pass"
	// HealthWarn is advice, or a check DNS did not let finish ("could not
	// check").
	HealthWarn HealthStatus = "warn"
	HealthFail HealthStatus = "fail"
)

// WorstHealthStatus is the worse of a and b: fail over warn over pass, so
// that a check made of several lookups reports its worst finding.
func WorstHealthStatus(a, b HealthStatus) HealthStatus {
	rank := func(s HealthStatus) int {
		switch s {
		case HealthFail:
			return 2
		case HealthWarn:
			return 1
		}
		return 0
	}
	if rank(b) > rank(a) {
		return b
	}
	return a
}

// DomainHealthChecker runs a domain's health checks (package domain). It
// does not modify d, and always answers: a lookup that fails makes its
// check warn, never the verification fail.
type DomainHealthChecker interface {
	Health(ctx context.Context, d *Domain) []HealthCheck
}
