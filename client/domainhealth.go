package client

import "github.com/mailroom/mailroom/client/api"

// A domain's health checks (Domain.Checks), under package api's names.
type (
	DomainHealthCheck  = api.DomainHealthCheck
	DomainHealthStatus = api.DomainHealthStatus
)

// The health checks' names and statuses.
const (
	DomainCheckDMARC            = api.DomainCheckDMARC
	DomainCheckSPFCoversSending = api.DomainCheckSPFCoversSending
	DomainCheckFCrDNS           = api.DomainCheckFCrDNS
	DomainCheckReturnPathMX     = api.DomainCheckReturnPathMX
	DomainCheckMTASTS           = api.DomainCheckMTASTS
	DomainCheckTLSRPT           = api.DomainCheckTLSRPT
	DomainCheckDNSBL            = api.DomainCheckDNSBL

	DomainHealthPass = api.DomainHealthPass
	DomainHealthWarn = api.DomainHealthWarn
	DomainHealthFail = api.DomainHealthFail
)
