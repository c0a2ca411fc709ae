package tlsrpt

import (
	"log/slog"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/mailroom/mailroom"
)

// Bounds of the counts a Collector holds between two flushes (docs/design.md
// "TLS reports"): memory stays bounded whatever the traffic.
const (
	// DefaultMaxDomains is how many window and recipient domain pairs a
	// Collector holds between flushes. Sessions with a new domain past it
	// are counted by the metric but left out of reports, and the count of
	// them is logged at the next flush.
	DefaultMaxDomains = 10000
	// DefaultMaxDetails is how many distinct failure details one domain's
	// policy holds between flushes. A new detail past it is counted under
	// its result type alone (no addresses, host or reason), so that the
	// report's totals stay exact while its details coarsen.
	DefaultMaxDetails = 100
	// maxReasonBytes bounds a failure's reason text.
	maxReasonBytes = 256
	// DefaultFlushEvery is how often counts go to the store.
	DefaultFlushEvery = 5 * time.Second
)

// Options configure a Collector.
type Options struct {
	// Store keeps the counts of all nodes; nil turns reports off (the
	// metric alone is counted).
	Store mailroom.TLSReportStore
	// Interval is the report window (--tls-rpt-interval; 24h when zero).
	Interval time.Duration
	// FlushEvery is how often Run writes counts (DefaultFlushEvery when
	// zero).
	FlushEvery time.Duration
	// MaxDomains and MaxDetails bound the counts held between flushes
	// (the defaults when zero).
	MaxDomains, MaxDetails int
	Now                    func() time.Time
	Log                    *slog.Logger
}

// Collector counts TLS session results (mailroom.TLSObserver) for the
// metric and the reports. It is safe for concurrent use; ObserveTLS takes
// a lock for a few map operations and never waits on the store.
type Collector struct {
	opts     Options
	sessions *prometheus.CounterVec

	mu      sync.Mutex
	pending map[countKey]int64
	domains map[domainKey]bool
	details map[policyKey]int // distinct details held per domain's policy
	dropped int64             // sessions left out past MaxDomains
}

var _ mailroom.TLSObserver = (*Collector)(nil)

// domainKey is one window of one recipient domain.
type domainKey struct {
	start  int64 // Unix nanoseconds
	domain string
}

// policyKey is one policy of a domainKey; the lines and patterns are
// joined with newlines, which neither holds.
type policyKey struct {
	domainKey
	typ, lines, mx string
}

// countKey is one row of counts; detail is zero for the successes.
type countKey struct {
	policyKey
	detail detailKey
}

type detailKey struct {
	result                              mailroom.TLSFailure
	sendingIP, receivingMX, receivingIP string
	reason                              string
}

// NewCollector returns a collector with its metric made, every policy and
// result present at zero from the start (so that a rate over it is
// defined before the first session).
func NewCollector(opts Options) *Collector {
	if opts.Interval <= 0 {
		opts.Interval = 24 * time.Hour
	}
	if opts.FlushEvery <= 0 {
		opts.FlushEvery = DefaultFlushEvery
	}
	if opts.MaxDomains <= 0 {
		opts.MaxDomains = DefaultMaxDomains
	}
	if opts.MaxDetails <= 0 {
		opts.MaxDetails = DefaultMaxDetails
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.Log == nil {
		opts.Log = slog.Default()
	}
	c := &Collector{opts: opts,
		sessions: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "mailroom_delivery_tls_total",
			Help: "TLS sessions with MX hosts by the policy they were made under and how TLS went (verified, unverified, plaintext, refused).",
		}, []string{"policy", "result"}),
	}
	for _, p := range mailroom.TLSPolicies {
		for _, o := range mailroom.TLSOutcomes {
			c.sessions.WithLabelValues(string(p), string(o))
		}
	}
	c.reset()
	return c
}

func (c *Collector) reset() {
	c.pending = map[countKey]int64{}
	c.domains = map[domainKey]bool{}
	c.details = map[policyKey]int{}
}

// Register registers the metric mailroom_delivery_tls_total on reg.
func (c *Collector) Register(reg prometheus.Registerer) { reg.MustRegister(c.sessions) }

// ObserveTLS counts one session result: the metric always, the reports'
// counts when reports are on.
//
// A result without an outcome is a policy that could not be had (an
// MTA-STS fetch failure, before any session): it goes into the reports
// only, since the session that follows is counted on its own.
func (c *Collector) ObserveTLS(r mailroom.TLSSessionResult) {
	if r.Outcome != "" {
		c.sessions.WithLabelValues(string(r.Policy), string(r.Outcome)).Inc()
	}
	if c.opts.Store == nil {
		return
	}
	domain := strings.TrimSuffix(strings.ToLower(r.Domain), ".")
	if domain == "" {
		return
	}
	at := r.At
	if at.IsZero() {
		at = c.opts.Now()
	}
	start, _ := windowOf(at, c.opts.Interval)
	k := countKey{policyKey: policyKey{domainKey: domainKey{start.UnixNano(), domain}, typ: mailroom.TLSReportPolicyNotFound}}
	// RFC 8460 §4.3: "sts" with the policy as served, one string per
	// line, and its mx patterns; a domain without a policy in force is
	// "no-policy-found" (a withdrawn policy, mode none, is none).
	if p := r.STS; p != nil && p.Mode != mailroom.MTASTSNone {
		k.typ = mailroom.TLSReportPolicySTS
		k.lines = strings.Join(policyLines(p.Text), "\n")
		k.mx = strings.Join(p.MX, "\n")
	}
	if r.Failure != "" {
		k.detail = detailKey{result: r.Failure, sendingIP: r.SendingIP, receivingMX: strings.TrimSuffix(r.MX, "."),
			receivingIP: r.ReceivingIP, reason: clip(r.Detail, maxReasonBytes)}
	}

	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.domains[k.domainKey] {
		if len(c.domains) >= c.opts.MaxDomains {
			c.dropped++
			return
		}
		c.domains[k.domainKey] = true
	}
	if _, held := c.pending[k]; !held && k.detail != (detailKey{}) {
		if c.details[k.policyKey] >= c.opts.MaxDetails {
			k.detail = detailKey{result: k.detail.result}
		}
		if _, held := c.pending[k]; !held {
			c.details[k.policyKey]++
		}
	}
	c.pending[k]++
}

// policyLines splits a policy's text into its lines (RFC 8461 §3.2: CRLF
// or LF), without empty ones.
func policyLines(text string) []string {
	var out []string
	for line := range strings.Lines(text) {
		if line = strings.TrimRight(line, "\r\n"); strings.TrimSpace(line) != "" {
			out = append(out, line)
		}
	}
	return out
}

// clip cuts s to at most n bytes, at a character's boundary.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}
