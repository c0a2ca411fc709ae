// Package delivery is the delivery runtime (docs/design.md): it claims due
// recipients from storage, composes and signs each message once, hands the
// deliveries to the Transport, and records every outcome with its event.
// The policies it applies (retry delays, outcome classification) live in
// the root package; the envelope sender is made by package inbound's
// return-path tokens (mailroom.EnvelopeSenders), the domain's key read
// through package domain (mailroom.SendingDomains).
package delivery

import (
	"context"
	"log/slog"
	"math/rand/v2"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mailroom/mailroom"
)

// Deliverer claims due mail and delivers it. Claims take whole messages;
// each claimed message is worked on by its own goroutine, so that a slow
// receiver holds only its own messages, never the next claim: the
// Deliverer claims again as soon as a message slot is free.
type Deliverer struct {
	Store  mailroom.MessageStore
	Signer mailroom.Signer
	// ReturnPaths makes each delivery's envelope sender (VERP), under the
	// service's key.
	ReturnPaths mailroom.EnvelopeSenders
	Transport   mailroom.Transport
	Now         func() time.Time
	Log         *slog.Logger
	Retry       mailroom.RetryPolicy
	// Reports applies the complaint a test address (complained@
	// simulator.invalid) brings after its delivery, as package inbound
	// applies a feedback loop's; nil: no complaint is simulated.
	Reports mailroom.ReportStore

	// Node is this node's id, recorded with its claims.
	Node string
	// Healthy reports whether this node's claims are still its own: false
	// while its heartbeat is failing, when other nodes may soon release
	// them. Nothing is claimed or started then. Nil means always healthy.
	Healthy func() bool
	// Lease bounds a claim in the database's clock: a backstop for a node
	// that lives but whose worker is stuck.
	Lease time.Duration
	// Batch is the most messages one claim takes; MaxMessages the most
	// messages in flight on this node.
	Batch       int
	MaxMessages int
	// PerDestination is the most deliveries in flight to one recipient
	// domain whose site is not known yet: past it, claims skip that
	// domain, so that other destinations keep flowing while one receiver
	// is slow. The transport's own caps pace the sessions themselves.
	PerDestination int
	// Sites, when set (direct delivery), is the sites' state the
	// transport keeps: claims count deliveries in flight per site, skip
	// the domains of a site that has its fill (its Capacity), is throttled
	// to a later place or is suspended, and wake when it has room again
	// (docs/api.md "How mail leaves").
	Sites mailroom.Sites
	// Poll is how often an idle Deliverer looks for due work that another
	// node queued or whose retry time came.
	Poll time.Duration
	// After is the idle wait's clock: it returns a channel that yields once
	// Poll has passed. Nil means time.After; tests give one they drive, to
	// count claims per poll without timing anything.
	After func(time.Duration) <-chan time.Time
	// DrainTimeout bounds how long Run lets SMTP exchanges in flight finish
	// once its context ends; past it they are cut off.
	DrainTimeout time.Duration
	// Observe, when set, is told of every recipient's attempt: its outcome
	// and how long the SMTP exchange took (for metrics).
	Observe func(outcome mailroom.Outcome, exchange time.Duration)
	// ObserveDeferral, when set, is told of every deferral's reason (for
	// metrics).
	ObserveDeferral func(reason mailroom.DeferralReason)

	// wake is closed (and replaced) to wake the idle claim loop: a
	// broadcast that a Wake during a claim cannot be lost to.
	wakeMu sync.Mutex
	wake   chan struct{}
	// wakeAt is the earliest time WakeAt was told of that has not come
	// yet, and wakeTimer the timer that calls Wake then.
	wakeAt    time.Time
	wakeTimer *time.Timer

	// dests counts deliveries in flight per destination; destsOnce gives
	// it Sites before first use (Run and DeliverDue may both use it).
	destsOnce sync.Once
	dests     destinations

	// storageDown is set while the runtime's writes find storage
	// unavailable, and cleared by the next write that gets through or by
	// StorageAnswered.
	storageDown atomic.Bool
}

// StorageAnswered tells the Deliverer that a write to storage went through
// (the node's heartbeat): writes of its own that still fail are then about
// their rows, not storage, and no reason to stop sending everything else.
func (d *Deliverer) StorageAnswered() { d.storageDown.Store(false) }

// Wake tells the Deliverer that work is due now.
func (d *Deliverer) Wake() {
	d.wakeMu.Lock()
	defer d.wakeMu.Unlock()
	if d.wake != nil {
		close(d.wake)
	}
	d.wake = make(chan struct{})
}

// WakeAt tells the Deliverer that work comes due at t (a scheduled send):
// it wakes then, so that such work goes out on time without an idle
// Deliverer polling more often than Poll. Only the earliest time is kept:
// a later one is found by the poll that follows, and other nodes' by
// their polls.
func (d *Deliverer) WakeAt(t time.Time) {
	d.wakeMu.Lock()
	defer d.wakeMu.Unlock()
	if !d.wakeAt.IsZero() && !t.Before(d.wakeAt) {
		return
	}
	if d.wakeTimer != nil {
		d.wakeTimer.Stop()
	}
	d.wakeAt = t
	d.wakeTimer = time.AfterFunc(time.Until(t), func() {
		d.wakeMu.Lock()
		if d.wakeAt.Equal(t) {
			d.wakeAt = time.Time{}
		}
		d.wakeMu.Unlock()
		d.Wake()
	})
}

// wakeChan returns the channel the next Wake closes.
func (d *Deliverer) wakeChan() <-chan struct{} {
	d.wakeMu.Lock()
	defer d.wakeMu.Unlock()
	if d.wake == nil {
		d.wake = make(chan struct{})
	}
	return d.wake
}

// Run claims and delivers until ctx ends, then drains: it claims nothing
// more, hands back the claimed recipients whose exchange has not started,
// lets the exchanges in flight finish (up to DrainTimeout) and records
// them, and returns when every message it took is settled. It never
// cancels an exchange mid-DATA before the drain time is up: a receiver
// cut off after the data may keep the mail and get it again.
func (d *Deliverer) Run(ctx context.Context) {
	exchanges, cutOff := context.WithCancel(context.WithoutCancel(ctx))
	defer cutOff()
	w := &work{d: d, stop: ctx, exchanges: exchanges, slots: max(1, d.MaxMessages),
		freed: make(chan struct{}, 1)}
	var sitesChanged <-chan struct{}
	if d.Sites != nil {
		sitesChanged = d.Sites.Changed()
	}
	minFree := w.lowWater()
	for ctx.Err() == nil {
		woken := d.wakeChan() // taken before the claim: a Wake during it is not missed
		n, err := w.claimOnce(minFree)
		if err != nil && ctx.Err() == nil {
			d.Log.Warn("delivery claim failed", "err", err)
		}
		if n > 0 && err == nil {
			continue // more may be due
		}
		minFree = w.lowWater()
		select {
		case <-ctx.Done():
		case <-woken:
			w.futile = nil // new mail: worth looking past busy domains at once
		case <-w.freed: // a slot or a destination came free
		case <-sitesChanged: // a site has room again
			w.futile = nil
		case <-d.after(d.Poll):
			// A poll claims into whatever slots are free: when slow
			// receivers hold most of them for minutes, the few left
			// would otherwise wait for the low-water mark meanwhile,
			// and with them all other mail.
			minFree = 1
		}
	}
	drain := time.AfterFunc(max(0, d.DrainTimeout), cutOff)
	w.inFlight.Wait()
	drain.Stop()
}

// after is the idle wait: d.After, or time.After (whose timer the runtime
// collects once it is unreferenced, since Go 1.23).
func (d *Deliverer) after(wait time.Duration) <-chan time.Time {
	if d.After != nil {
		return d.After(wait)
	}
	return time.After(wait)
}

// DeliverDue claims once and delivers what it claimed, returning how many
// recipients it claimed once all of them are settled: a single pass, for
// tests and tools.
func (d *Deliverer) DeliverDue(ctx context.Context) (int, error) {
	w := &work{d: d, stop: ctx, exchanges: ctx, slots: max(1, d.MaxMessages),
		freed: make(chan struct{}, 1)}
	n, err := w.claimOnce(w.lowWater())
	w.inFlight.Wait()
	return n, err
}

// work is one Run's state: the message slots and what is in flight.
type work struct {
	d *Deliverer
	// stop ends claiming and the start of new exchanges; exchanges ends
	// the exchanges themselves (at the end of the drain).
	stop, exchanges context.Context
	// slots is how many messages may be in flight; busy how many are.
	slots    int
	busy     atomic.Int64
	freed    chan struct{}
	inFlight sync.WaitGroup
	// futile is the busy-domain list of the last claim that found nothing
	// else due, until futileUntil. Such a claim reads the whole queue (all
	// of it is for the busy domains), so it is not repeated with the same
	// list until new mail is queued or a poll interval has passed (retries
	// and scheduled sends come due with time). Only the claim loop uses
	// them.
	futile      []string
	futileUntil time.Time
}

// claimOnce claims as many messages as there are free slots (at most a
// Batch), when at least minFree are, skipping destinations at their cap,
// and starts each one. It returns how many recipients it claimed.
func (w *work) claimOnce(minFree int) (int, error) {
	d := w.d
	free := w.slots - int(w.busy.Load())
	// Nothing is claimed that could not be started (see mayStart): it
	// would only be handed back, and claimed again, in a loop.
	if free < minFree || d.storageDown.Load() || (d.Healthy != nil && !d.Healthy()) {
		return 0, nil
	}
	now := d.Now().UTC()
	skip, wake := d.destinations().busy(max(1, d.PerDestination), now)
	if !wake.IsZero() {
		// A throttled or suspended site's mail is not claimed now; the
		// claim loop wakes when its next place comes.
		d.WakeAt(wake)
	}
	if len(skip) > 0 && slices.Equal(skip, w.futile) && time.Now().Before(w.futileUntil) {
		return 0, nil
	}
	claimed, err := d.Store.ClaimDueRecipients(w.stop, mailroom.Claim{
		Node: d.Node, Now: now, Lease: d.Lease, Limit: min(free, max(1, d.Batch)),
		SkipDomains: skip,
	})
	if err != nil || len(claimed) == 0 {
		if err == nil && len(skip) > 0 {
			w.futile, w.futileUntil = skip, time.Now().Add(d.Poll)
		}
		return 0, err
	}
	w.futile = nil
	for _, msg := range byMessage(claimed) {
		w.busy.Add(1)
		domains := make([]string, len(msg))
		for i, q := range msg {
			domains[i] = q.Domain()
			d.destinations().add(domains[i], now)
		}
		w.inFlight.Go(func() {
			defer w.release()
			defer w.destinationsDone(domains)
			w.deliverMessage(msg)
		})
	}
	return len(claimed), nil
}

// destinations is the count of deliveries in flight per destination,
// following Sites.
func (d *Deliverer) destinations() *destinations {
	d.destsOnce.Do(func() { d.dests.sites = d.Sites })
	return &d.dests
}

// destinationsDone counts a message's deliveries finished, and wakes the
// claim loop when that gave a destination room.
func (w *work) destinationsDone(domains []string) {
	for _, domain := range domains {
		if w.d.destinations().done(domain, max(1, w.d.PerDestination)) {
			w.signalFreed()
		}
	}
}

// lowWater is how many message slots must be free before the node claims
// again: half a batch. At full load, claiming as soon as one slot frees
// would claim one message per transaction, and on SQLite every claim
// takes the single writer from the commits.
func (w *work) lowWater() int { return max(1, min(w.d.Batch, w.slots)/2) }

// release frees a message slot, and tells the claim loop when that brings
// the free slots to the low-water mark: a claim then finds room again.
// Waking it on every finished message would make it claim (and scan the
// queue) once per message while nothing else is due.
func (w *work) release() {
	// Each release sees a count of its own, so exactly one sees the mark.
	if w.slots-int(w.busy.Add(-1)) == w.lowWater() {
		w.signalFreed()
	}
}

// signalFreed wakes the claim loop if it waits for room.
func (w *work) signalFreed() {
	select {
	case w.freed <- struct{}{}:
	default:
	}
}

// byMessage splits claimed recipients (ordered by message) per message.
func byMessage(claimed []*mailroom.QueuedRecipient) [][]*mailroom.QueuedRecipient {
	var out [][]*mailroom.QueuedRecipient
	for i, q := range claimed {
		if i == 0 || q.MessageID != claimed[i-1].MessageID {
			out = append(out, nil)
		}
		out[len(out)-1] = append(out[len(out)-1], q)
	}
	return out
}

// jitter is the retry delay's random factor.
func jitter() float64 { return mailroom.Jitter(rand.Float64()) }
