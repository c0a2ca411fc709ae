package webhook

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// Backlog is what the backlog gauges read: Store.WebhookBacklog.
type Backlog interface {
	WebhookBacklog(ctx context.Context) (pending int, oldest time.Time, err error)
}

// Metrics registers the webhook metrics on reg and returns the hook to set
// as Dispatcher.Observe. An operator sees from them that endpoints fail
// (attempts by outcome), answer slowly (attempt duration), or that the
// nodes fall behind (deliveries pending, and the age of the oldest: a
// backlog that grows while its oldest ages is a dispatcher that does not
// keep up; one that holds old retries is an endpoint that is down).
func Metrics(reg prometheus.Registerer, store Backlog, log *slog.Logger) func(outcome string, took time.Duration) {
	attempts := prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "mailroom_webhook_attempts_total",
		Help: "Webhook delivery attempts made by this node, by outcome (succeeded, http_error, timeout, connection_error, refused, not_sent).",
	}, []string{"outcome"})
	duration := prometheus.NewHistogram(prometheus.HistogramOpts{
		Name: "mailroom_webhook_attempt_seconds",
		Help: "Time of a webhook delivery attempt, from the request to the end of the response's excerpt (at most 15 s).",
		// 5 ms to about 19 s: the whole span an attempt may take.
		Buckets: prometheus.ExponentialBuckets(0.005, 2.5, 10),
	})
	reg.MustRegister(attempts, duration, newBacklogCollector(store, log))
	for _, o := range Outcomes {
		attempts.WithLabelValues(o) // present at 0 from the start
	}
	return func(outcome string, took time.Duration) {
		attempts.WithLabelValues(outcome).Inc()
		duration.Observe(took.Seconds())
	}
}

// backlogEvery is how often the backlog is read at most: scrapes more
// frequent than that (several Prometheus servers, a human with curl) see
// the last reading, so that the metrics never load storage.
const backlogEvery = 5 * time.Second

// backlogCollector fills the backlog gauges from storage at scrape time,
// not on a timer of its own: a node nobody scrapes asks nothing, and the
// pending count is the whole cluster's, the same from every node.
type backlogCollector struct {
	store           Backlog
	log             *slog.Logger
	pending, oldest *prometheus.Desc

	mu       sync.Mutex
	readAt   time.Time
	ok       bool
	n        int
	oldestAt time.Time
}

func newBacklogCollector(store Backlog, log *slog.Logger) *backlogCollector {
	return &backlogCollector{store: store, log: log,
		pending: prometheus.NewDesc("mailroom_webhook_deliveries_pending",
			"Webhook deliveries waiting to be delivered or retried, on every node.", nil, nil),
		oldest: prometheus.NewDesc("mailroom_webhook_oldest_pending_seconds",
			"Age of the oldest pending webhook delivery (0 when none is pending).", nil, nil),
	}
}

func (c *backlogCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- c.pending
	ch <- c.oldest
}

// Collect reports the last reading, made anew when it is older than
// backlogEvery. While storage does not answer, the gauges are left out of
// the scrape (absent, not a misleading zero).
func (c *backlogCollector) Collect(ch chan<- prometheus.Metric) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if time.Since(c.readAt) >= backlogEvery {
		ctx, cancel := context.WithTimeout(context.Background(), backlogEvery)
		n, oldest, err := c.store.WebhookBacklog(ctx)
		cancel()
		c.readAt, c.ok = time.Now(), err == nil
		if err != nil {
			c.log.Warn("reading the webhook backlog for the metrics failed", "err", err)
		} else {
			c.n, c.oldestAt = n, oldest
		}
	}
	if !c.ok {
		return
	}
	var age time.Duration
	if !c.oldestAt.IsZero() {
		age = max(0, time.Since(c.oldestAt))
	}
	ch <- prometheus.MustNewConstMetric(c.pending, prometheus.GaugeValue, float64(c.n))
	ch <- prometheus.MustNewConstMetric(c.oldest, prometheus.GaugeValue, age.Seconds())
}
