package smtpserver

import "github.com/prometheus/client_golang/prometheus"

// OutcomeConnRefused is the outcome the skeleton reports itself: a
// connection beyond MaxConnsPerIP or MaxConns, refused in Accept.
const OutcomeConnRefused = "conn_refused"

// The outcomes of the sessions the skeleton ends itself (sessionGuard),
// answered 421 4.7.0 and closed: past MaxJunkCommands, MaxErrors,
// SessionTimeout.
const (
	OutcomeClosedJunk           = "closed_junk"
	OutcomeClosedErrors         = "closed_errors"
	OutcomeClosedSessionTimeout = "closed_session_timeout"
)

// Metrics registers a listener's counter of outcomes, name with the label
// outcome, on reg, with a series at 0 for each of outcomes from the
// start, and returns the hook to set as the listener's Observe.
func Metrics(reg prometheus.Registerer, name, help string, outcomes []string) func(outcome string) {
	c := prometheus.NewCounterVec(prometheus.CounterOpts{Name: name, Help: help}, []string{"outcome"})
	reg.MustRegister(c)
	for _, o := range outcomes {
		c.WithLabelValues(o)
	}
	return func(outcome string) { c.WithLabelValues(outcome).Inc() }
}
