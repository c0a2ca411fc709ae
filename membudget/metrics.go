package membudget

import (
	"errors"

	"github.com/prometheus/client_golang/prometheus"
)

// The surfaces that take memory from the budget, as the refusals count
// them: each answers a refusal in its own terms (HTTPS 503 with
// Retry-After, SMTP submission 452 4.3.1).
const (
	SurfaceHTTP       = "http"
	SurfaceSubmission = "submission"
)

// Reason is how a refusal is counted: "node" for ErrNodeFull (the whole
// budget), "account" for ErrAccountShare (the account's share).
func Reason(err error) string {
	if errors.Is(err, ErrAccountShare) {
		return "account"
	}
	return "node"
}

// Refusals counts the budget's refusals by surface and reason
// (mailroom_request_memory_refused_total). A nil *Refusals counts
// nothing.
type Refusals struct{ c *prometheus.CounterVec }

// Count counts one refusal err of surface.
func (r *Refusals) Count(surface string, err error) {
	if r != nil {
		r.c.WithLabelValues(surface, Reason(err)).Inc()
	}
}

// Metrics registers the budget's metrics on reg, once for the node, and
// returns its counter of refusals, which every surface taking from b (the
// HTTPS API, SMTP submission) is given, so that they show in one metric.
// With a nil reg or a nil b nothing is registered and the refusals are
// counted nowhere.
func Metrics(reg prometheus.Registerer, b *Budget) *Refusals {
	if reg == nil || b == nil {
		return nil
	}
	c := prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "mailroom_request_memory_refused_total",
		Help: "Requests refused because the memory budget for requests in flight was taken (HTTPS 503, SMTP submission 452), " +
			"by surface (http, submission) and reason: node (the whole budget) or account (the account's share).",
	}, []string{"surface", "reason"})
	for _, surface := range []string{SurfaceHTTP, SurfaceSubmission} {
		for _, reason := range []string{"node", "account"} {
			c.WithLabelValues(surface, reason)
		}
	}
	reg.MustRegister(c,
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "mailroom_request_memory_reserved_bytes",
			Help: "Bytes of the memory budget held by requests in flight.",
		}, func() float64 { return float64(b.InUse()) }),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "mailroom_request_memory_budget_bytes",
			Help: "The memory budget for requests in flight (serve --request-memory).",
		}, func() float64 { return float64(b.Total()) }))
	return &Refusals{c: c}
}
