package main

import (
	"context"
	"log/slog"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/mailroom/mailroom"
	"github.com/mailroom/mailroom/ratelimit"
)

// rateLimitReload is how often serve rereads the accounts' limits: half of
// the 10 s within which docs/api.md "Limits" promises that `mailroom accounts
// update` reaches running nodes, so a slow reload still makes it.
const rateLimitReload = 5 * time.Second

// newRateLimiter returns the per-account request limiter of serve (the
// Limiter of http.Server), with the limits already read once so that they
// hold from the first request; if storage does not answer within 5 s the
// defaults hold until the first reload of Run that succeeds. Its gauges
// show how many buckets the node holds and the node count its shares are
// computed for (set by the node registry through SetNodes).
//
// Serve starts limiter.Run(ctx, rateLimitReload) beside its other workers.
func newRateLimiter(ctx context.Context, store mailroom.AccountStore, reg prometheus.Registerer, log *slog.Logger) *ratelimit.Limiter {
	l := ratelimit.New(store, log)
	first, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if err := l.Reload(first); err != nil {
		log.Warn("reading account rate limits failed; the defaults hold until a reload succeeds", "err", err)
	}
	reg.MustRegister(
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "mailroom_rate_limit_buckets",
			Help: "Accounts whose request-rate bucket this node holds (idle accounts' buckets are dropped once full).",
		}, func() float64 { return float64(l.Buckets()) }),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "mailroom_rate_limit_nodes",
			Help: "Nodes this node shares each account's rate limit with, itself included.",
		}, func() float64 { return float64(l.Nodes()) }),
	)
	return l
}
