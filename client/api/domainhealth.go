package api

// DomainHealthCheck is one piece of advice about a sending domain
// (docs/api.md "Domain health"), refreshed with each verification and
// re-check. Checks never change the domain's status.
type DomainHealthCheck struct {
	// Name is one of the DomainCheck… names.
	Name string `json:"name"`
	// Status is pass, warn (advice, or a lookup that could not be made)
	// or fail.
	Status DomainHealthStatus `json:"status"`
	// Detail says what was found and, unless it passed, what to fix.
	Detail string `json:"detail"`
}

// The names of the health checks, in the order a domain lists them.
const (
	DomainCheckDMARC            = "dmarc"
	DomainCheckSPFCoversSending = "spf_covers_sending_addresses"
	DomainCheckFCrDNS           = "fcrdns"
	DomainCheckReturnPathMX     = "return_path_mx"
	DomainCheckMTASTS           = "mta_sts"
	DomainCheckTLSRPT           = "tls_rpt"
	DomainCheckDNSBL            = "dnsbl"
)

// DomainHealthStatus is a health check's verdict.
type DomainHealthStatus string

const (
	DomainHealthPass DomainHealthStatus = "pass"
	DomainHealthWarn DomainHealthStatus = "warn"
	DomainHealthFail DomainHealthStatus = "fail"
)
