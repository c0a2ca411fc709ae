package webhook

import (
	"context"
	"crypto/x509"
	"log/slog"
	"net/http"
	"sync"
	"time"

	"github.com/mailroom/mailroom"
	"github.com/mailroom/mailroom/netguard"
	"github.com/mailroom/mailroom/positive"
)

// Store is the part of storage the dispatcher uses: the outbox's claims
// and outcomes, and its backlog for the metrics.
type Store interface {
	ClaimWebhookDeliveries(ctx context.Context, c mailroom.WebhookClaim) ([]*mailroom.WebhookDelivery, error)
	RecordWebhookOutcomes(ctx context.Context, outcomes []*mailroom.WebhookOutcome, disableBefore time.Time) error
	ReleaseWebhookClaims(ctx context.Context, deliveries []*mailroom.WebhookDelivery) error
	WebhookBacklog(ctx context.Context) (pending int, oldest time.Time, err error)
}

// Defaults of the Dispatcher's zero fields.
const (
	// DefaultPerEndpoint matches what one receiver is commonly asked to
	// take at once (Svix's default concurrency per endpoint is of that
	// order); more would only queue inside a slow receiver.
	DefaultPerEndpoint = 8
	DefaultMaxInFlight = 128
	// DefaultLease outlasts an attempt (mailroom.WebhookTimeout) with room
	// to record it, and a wait in an endpoint's queue (see slots), so that
	// no claim runs out while its attempt is still being made.
	DefaultLease = time.Minute
	// DefaultPoll keeps the lag from a state change on another node (or a
	// retry coming due) to its webhook well under the 200 ms median that
	// docs/api.md aims at; a change on this node wakes the dispatcher at
	// once (Wake).
	DefaultPoll = 100 * time.Millisecond
)

// Dispatcher claims due webhook deliveries and makes their attempts. Each
// claimed delivery is attempted in its own goroutine, at once unless its
// endpoint already has PerEndpoint attempts in flight on this node, so
// that a slow or hanging endpoint holds only its own deliveries and never
// another endpoint's: claims skip an endpoint at its cap.
//
// Store, Keys, Log and Now are required; the other fields have defaults.
type Dispatcher struct {
	Store Store
	// Keys returns the keys that sign a delivery to e at now
	// (Service.SigningKeys): two during a rotation.
	Keys func(e *mailroom.WebhookEndpoint, now time.Time) ([][]byte, error)
	// Node is this node's id, recorded with its claims.
	Node string
	// AllowPrivate lets deliveries reach loopback and private addresses
	// and plain http URLs (serve --webhooks-allow-private: local
	// development and tests). Off, every connection is checked by
	// netguard.Control on the address actually dialled.
	AllowPrivate bool
	// Version is the service's, sent as User-Agent: Mailroom-Webhooks/<version>.
	Version string
	// Resolver, when set, finds endpoints' hosts instead of the system's
	// resolver (serve --dns-server: the resolver their URLs were checked
	// with).
	Resolver netguard.Resolver
	// RootCAs are the authorities that TLS certificates are checked
	// against; nil means the system's. Tests add their receiver's.
	RootCAs *x509.CertPool
	Log     *slog.Logger
	Now     func() time.Time
	// PerEndpoint is the most attempts in flight to one endpoint on this
	// node (default DefaultPerEndpoint), and the connections kept alive to
	// its host; MaxInFlight the most on this node (DefaultMaxInFlight).
	PerEndpoint int
	MaxInFlight int
	// Lease bounds a claim (default DefaultLease): a node that dies with
	// deliveries claimed leaves them to another once it runs out.
	Lease time.Duration
	// Poll is how often an idle dispatcher looks for deliveries that came
	// due (retries) or that another node's events queued (DefaultPoll).
	Poll time.Duration
	// Observe, when set, is told of every attempt: its outcome (one of
	// the Outcome constants) and how long it took. Metrics returns one.
	Observe func(outcome string, took time.Duration)

	// wake holds one pending nudge: a Wake during a claim is kept for the
	// wait that follows it, and any number of Wakes cost one claim.
	wakeOnce sync.Once
	wake     chan struct{}

	clientOnce sync.Once
	client     *http.Client
}

// Wake tells the dispatcher that deliveries are due now (an event was
// written on this node). It never blocks.
func (d *Dispatcher) Wake() {
	select {
	case d.wakeChan() <- struct{}{}:
	default:
	}
}

func (d *Dispatcher) wakeChan() chan struct{} {
	d.wakeOnce.Do(func() { d.wake = make(chan struct{}, 1) })
	return d.wake
}

func (d *Dispatcher) perEndpoint() int { return positive.Or(d.PerEndpoint, DefaultPerEndpoint) }
func (d *Dispatcher) maxInFlight() int { return positive.Or(d.MaxInFlight, DefaultMaxInFlight) }

// lease is Lease, or its default, and never shorter than an attempt with
// the time to record it: a lease that ran out mid-attempt would let
// another node make the same attempt beside this one.
func (d *Dispatcher) lease() time.Duration {
	return max(positive.Or(d.Lease, DefaultLease), mailroom.WebhookTimeout+2*leaseMargin)
}

func (d *Dispatcher) poll() time.Duration { return positive.Or(d.Poll, DefaultPoll) }

// Run claims and attempts deliveries until ctx ends, then drains: it
// claims nothing more, hands back the claimed deliveries whose attempt has
// not started (due again as they were before the claim, for any node,
// without waiting for the lease to run out), lets the
// attempts in flight finish (each is bounded by mailroom.WebhookTimeout),
// records their outcomes, and returns.
func (d *Dispatcher) Run(ctx context.Context) {
	r := newRun(d, ctx)
	recorded := make(chan struct{})
	go func() { defer close(recorded); r.rec.run() }()

	idle := time.NewTimer(d.poll())
	defer idle.Stop()
	var failing time.Duration // the backoff while claims fail
	for ctx.Err() == nil {
		n, err := r.claim()
		switch {
		case err != nil && ctx.Err() == nil:
			if failing == 0 {
				d.Log.Warn("webhook claim failed; trying again with backoff", "err", err)
			}
			failing = min(max(2*failing, d.poll()), 5*time.Second)
		case err == nil && failing > 0:
			d.Log.Info("webhook claims work again")
			failing = 0
		}
		if n > 0 && err == nil && r.slots.free() >= r.lowWater() {
			continue // more may be due, and there is room for it
		}
		// The timer is reused so that an idle poll allocates nothing; since
		// Go 1.23 Reset needs no draining.
		idle.Reset(max(failing, d.poll()))
		select {
		case <-ctx.Done():
		case <-d.wakeChan():
		case <-r.freed:
		case <-idle.C:
		}
	}
	r.drain()
	<-recorded
	d.closeIdle()
}
