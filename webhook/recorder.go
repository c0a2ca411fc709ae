package webhook

import (
	"context"
	"sync"

	"github.com/mailroom/mailroom"
	"github.com/mailroom/mailroom/storageretry"
)

// recorder writes the outcomes of attempts, batched by group commit: one
// goroutine records whatever has finished, and what finishes while it
// writes is taken by its next write. A lone outcome is written at once,
// with no wait for company; under load, one transaction records many, so
// that recording does not become the bottleneck of 1,000 events a second
// on SQLite's single writer.
type recorder struct {
	d *Dispatcher
	// stop is the Run's context: once it ends, a write that storage does
	// not take is tried for a bounded time more, not for ever.
	stop    context.Context
	mu      sync.Mutex
	pending []*mailroom.WebhookOutcome
	// signal holds one nudge that pending has grown; closed is closed by
	// the drain once no attempt is left to add anything.
	signal chan struct{}
	closed chan struct{}
}

// maxBatch bounds one write, so that a backlog that built up while
// storage was away is not written in one huge transaction.
const maxBatch = 500

// add hands an outcome to the recorder; it never blocks.
func (r *recorder) add(o *mailroom.WebhookOutcome) {
	r.mu.Lock()
	r.pending = append(r.pending, o)
	r.mu.Unlock()
	select {
	case r.signal <- struct{}{}:
	default:
	}
}

func (r *recorder) take() []*mailroom.WebhookOutcome {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := min(len(r.pending), maxBatch)
	batch := r.pending[:n:n]
	r.pending = r.pending[n:]
	return batch
}

// run records until the drain closes r.closed and nothing is pending.
func (r *recorder) run() {
	for {
		batch := r.take()
		if len(batch) == 0 {
			select {
			case <-r.signal:
				continue
			case <-r.closed:
				if batch = r.take(); len(batch) == 0 {
					return
				}
			}
		}
		r.record(batch)
	}
}

// record writes a batch. The attempts happened: an outcome that is lost
// means the delivery is attempted again once its lease runs out (at least
// once, as docs/api.md promises), and its attempt is missing from the
// endpoint's log, so storage being away is waited out (storageretry), and a
// batch that storage refuses for another reason is written one outcome at
// a time, so that one bad row does not take the others with it. Whatever
// is still not written is logged, never dropped in silence.
func (r *recorder) record(batch []*mailroom.WebhookOutcome) {
	write := func(outcomes []*mailroom.WebhookOutcome) error {
		return storageretry.Write(r.stop, func(ctx context.Context) error {
			disableBefore := r.d.Now().UTC().Add(-mailroom.WebhookDisableAfter)
			return r.d.Store.RecordWebhookOutcomes(ctx, outcomes, disableBefore)
		})
	}
	err := write(batch)
	if err == nil {
		return
	}
	if len(batch) > 1 && !mailroom.IsCode(err, mailroom.ECodeUnavailable) {
		for _, o := range batch {
			if err := write([]*mailroom.WebhookOutcome{o}); err != nil {
				r.lost(o, err)
			}
		}
		return
	}
	for _, o := range batch {
		r.lost(o, err)
	}
}

func (r *recorder) lost(o *mailroom.WebhookOutcome, err error) {
	r.d.Log.Error("could not record a webhook attempt; the delivery is attempted again once its lease runs out",
		"delivery_id", o.Delivery.ID, "event_id", o.Attempt.EventID, "endpoint_id", o.Delivery.EndpointID,
		"attempt", o.Attempt.Attempt, "status", o.Attempt.Status, "err", err)
}
