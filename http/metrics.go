package http

import (
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// metrics are the request counters and latencies served to Prometheus on
// the operator's metrics listener (never on the API port).
type metrics struct {
	requests    *prometheus.CounterVec
	duration    *prometheus.HistogramVec
	rateLimited *prometheus.CounterVec
	inFlight    prometheus.Gauge
}

func newMetrics(reg prometheus.Registerer) *metrics {
	m := &metrics{
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "mailroom_http_requests_total",
			Help: "API requests answered, by method, route pattern and status.",
		}, []string{"method", "route", "status"}),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "mailroom_http_request_duration_seconds",
			Help:    "Time to answer API requests, by route pattern.",
			Buckets: []float64{.0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 10},
		}, []string{"route"}),
		// By account, so that an operator sees which customer runs into
		// its limit (and may raise it with `mailroom accounts update`).
		rateLimited: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "mailroom_rate_limited_total",
			Help: "Requests refused with 429 rate_limited, by account id.",
		}, []string{"account"}),
		// What a drain waits for, and what a load balancer's view of the
		// node should match.
		inFlight: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "mailroom_http_requests_in_flight",
			Help: "API requests being served now.",
		}),
	}
	if reg != nil {
		reg.MustRegister(m.requests, m.duration, m.rateLimited, m.inFlight)
	}
	return m
}

func (m *metrics) observe(method, route string, status int, elapsed time.Duration) {
	m.requests.WithLabelValues(method, route, strconv.Itoa(status)).Inc()
	m.duration.WithLabelValues(route).Observe(elapsed.Seconds())
}
