package http

import (
	"github.com/mailroom/mailroom"
	"github.com/mailroom/mailroom/client/api"
)

// toHealthChecks shows a domain's health checks (docs/api.md "Domain
// health"): always a list, empty before the first check.
func toHealthChecks(cs []mailroom.HealthCheck) []api.DomainHealthCheck {
	out := make([]api.DomainHealthCheck, len(cs))
	for i, c := range cs {
		out[i] = api.DomainHealthCheck{Name: string(c.Name), Status: api.DomainHealthStatus(c.Status), Detail: c.Detail}
	}
	return out
}
