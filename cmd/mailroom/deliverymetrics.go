package main

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/mailroom/mailroom"
)

// deliveryMetrics counts delivery attempts by outcome and times the SMTP
// exchanges, so that an operator sees deferrals and bounces rise before
// customers report them.
func deliveryMetrics(reg prometheus.Registerer) func(mailroom.Outcome, time.Duration) {
	attempts := prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "mailroom_delivery_attempts_total",
		Help: "Delivery attempts per recipient, by outcome (delivered, deferred, bounced).",
	}, []string{"outcome"})
	exchange := prometheus.NewHistogram(prometheus.HistogramOpts{
		Name:    "mailroom_delivery_exchange_seconds",
		Help:    "Time of the SMTP exchange of a delivery (one message to one domain).",
		Buckets: prometheus.ExponentialBuckets(0.005, 2.5, 10),
	})
	reg.MustRegister(attempts, exchange)
	for _, o := range []mailroom.Outcome{mailroom.Delivered, mailroom.Deferred, mailroom.Bounced} {
		attempts.WithLabelValues(o.String()) // present at 0 from the start
	}
	return func(o mailroom.Outcome, d time.Duration) {
		attempts.WithLabelValues(o.String()).Inc()
		exchange.Observe(d.Seconds())
	}
}

// deferralMetrics counts deferrals by reason (docs/api.md "How mail
// leaves"): throttled and site_suspended rising say a receiver pushes back;
// connection and dns say the network does.
func deferralMetrics(reg prometheus.Registerer) func(mailroom.DeferralReason) {
	deferrals := prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "mailroom_deferrals_total",
		Help: "Recipients deferred, by reason (throttled, greylisted, site_suspended, tls_required, connection, dns, temporary).",
	}, []string{"reason"})
	reg.MustRegister(deferrals)
	for _, r := range mailroom.DeferralReasons {
		deferrals.WithLabelValues(string(r)) // present at 0 from the start
	}
	return func(r mailroom.DeferralReason) { deferrals.WithLabelValues(string(r)).Inc() }
}
