package webhook

import (
	"context"
	"sync"
	"time"

	"github.com/mailroom/mailroom"
	"github.com/mailroom/mailroom/storageretry"
)

// run is one Run's state: what this node holds and what it still has to
// record.
type run struct {
	d *Dispatcher
	// stop ends claiming and the start of attempts; attempts themselves
	// run on a context of their own, bounded by mailroom.WebhookTimeout,
	// so that a shutdown does not cut off a receiver mid-request (it would
	// get the event again, later, from a node that does not know it did).
	stop     context.Context
	attempts context.Context
	slots    *slots
	rec      *recorder
	// freed wakes the claim loop when a claim may find more (see
	// slots.finish).
	freed    chan struct{}
	inFlight sync.WaitGroup
}

func newRun(d *Dispatcher, ctx context.Context) *run {
	r := &run{d: d, stop: ctx, attempts: context.WithoutCancel(ctx),
		slots: newSlots(d.perEndpoint(), d.maxInFlight()), freed: make(chan struct{}, 1)}
	r.rec = &recorder{d: d, stop: ctx, signal: make(chan struct{}, 1), closed: make(chan struct{})}
	return r
}

// lowWater is how many slots must be free before the node claims again,
// an eighth of them: at full load, claiming whenever one slot frees would
// claim one delivery per transaction, and on SQLite every claim takes the
// single writer from the commits of events.
func (r *run) lowWater() int { return max(1, r.slots.total/8) }

// claim claims as many deliveries as there are free slots, skipping the
// endpoints at their cap, and starts each one (or queues it behind its
// endpoint's attempts). It returns how many it claimed.
func (r *run) claim() (int, error) {
	d := r.d
	free := r.slots.free()
	if free < r.lowWater() {
		return 0, nil
	}
	// The lease runs from before the claim, as the store counts it.
	at := time.Now()
	got, err := d.Store.ClaimWebhookDeliveries(r.stop, mailroom.WebhookClaim{
		Node: d.Node, Now: d.Now().UTC(), Lease: d.lease(), Limit: free,
		PerEndpoint: r.slots.hold, SkipEndpoints: r.slots.busy(),
	})
	if err != nil || len(got) == 0 {
		return 0, err
	}
	if r.stop.Err() != nil {
		// The claim went through as the node began to stop.
		r.handBack(got)
		return len(got), nil
	}
	for _, del := range got {
		c := &claimed{d: del, at: at}
		if r.slots.admit(c) {
			r.start(c)
		}
	}
	return len(got), nil
}

// start attempts c in a goroutine of its own, then, in the same one, each
// delivery that waited for its endpoint's slot.
func (r *run) start(c *claimed) {
	r.inFlight.Go(func() {
		for c != nil {
			endpoint := c.d.EndpointID
			if r.stale(c) {
				r.d.Log.Warn("a webhook delivery waited for its endpoint's slot for most of its lease; handing it back",
					"delivery_id", c.d.ID, "endpoint_id", endpoint)
				r.handBack([]*mailroom.WebhookDelivery{c.d})
			} else if o := r.d.attempt(r.attempts, c.d); o != nil {
				r.rec.add(o)
			}
			var freed bool
			c, freed = r.slots.finish(endpoint, r.lowWater())
			if freed {
				select {
				case r.freed <- struct{}{}:
				default:
				}
			}
		}
	})
}

// stale reports whether c's lease may run out before its attempt ends
// (with a margin to record it): another node could then claim it and
// make the same attempt beside this one.
func (r *run) stale(c *claimed) bool {
	return time.Since(c.at) > r.d.lease()-mailroom.WebhookTimeout-leaseMargin
}

// leaseMargin is the part of a lease kept to record an attempt's outcome.
const leaseMargin = 5 * time.Second

// drain ends a Run: the deliveries waiting for a slot are handed back,
// the attempts in flight finish, and their outcomes are recorded.
func (r *run) drain() {
	var waiting []*mailroom.WebhookDelivery
	for _, c := range r.slots.close() {
		waiting = append(waiting, c.d)
	}
	if len(waiting) > 0 {
		r.handBack(waiting)
	}
	r.inFlight.Wait()
	close(r.rec.closed)
}

// handBack releases deliveries whose attempt never started: they are due
// again at once, for this node or another. If storage does not take them,
// they come back when their lease runs out.
func (r *run) handBack(deliveries []*mailroom.WebhookDelivery) {
	err := storageretry.Write(r.rec.stop, func(ctx context.Context) error { return r.d.Store.ReleaseWebhookClaims(ctx, deliveries) })
	if err != nil {
		r.d.Log.Warn("could not hand back claimed webhook deliveries; they are attempted again once their lease runs out",
			"deliveries", len(deliveries), "err", err)
	}
}
