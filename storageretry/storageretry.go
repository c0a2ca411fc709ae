// Package storageretry retries a storage write while storage is
// unavailable (mailroom.ECodeUnavailable), for the runtimes whose writes
// record something that already happened: a delivery's outcome, a webhook
// attempt, a hand-back of claims. Such a write must not be lost to an
// outage (the mail or the event would go again), yet a node that is told
// to stop must not wait for storage for ever.
package storageretry

import (
	"context"
	"time"

	"github.com/mailroom/mailroom"
)

// Write runs write, and runs it again with backoff while it fails with
// ECodeUnavailable: while stop is live, until storage answers; once stop
// ends (the node drains), for 30 s more at most. Any other error, and
// success, return at once.
//
// A stop during a backoff wait ends the wait, so that the drain's limit
// starts when the drain does and not up to a backoff later. Each try gets
// a context of its own, bounded by 30 s, that keeps stop's values but
// not its cancellation: what is being recorded happened, and a drain is
// exactly when it must still be written.
func Write(stop context.Context, write func(ctx context.Context) error) error {
	return standard.write(stop, write)
}

// policy is how patient Write is; tests shorten it.
type policy struct {
	// timeout bounds one try, and the tries after stop ends.
	timeout time.Duration
	// firstWait is the first backoff, doubled after each refusal up to
	// maxWait.
	firstWait, maxWait time.Duration
}

var standard = policy{timeout: 30 * time.Second, firstWait: 100 * time.Millisecond, maxWait: 5 * time.Second}

func (p policy) write(stop context.Context, write func(ctx context.Context) error) error {
	var giveUp time.Time
	for wait := p.firstWait; ; wait = min(2*wait, p.maxWait) {
		ctx, cancel := context.WithTimeout(context.WithoutCancel(stop), p.timeout)
		err := write(ctx)
		cancel()
		if err == nil || !mailroom.IsCode(err, mailroom.ECodeUnavailable) {
			return err
		}
		stopping := stop.Done()
		if stop.Err() != nil {
			if giveUp.IsZero() {
				giveUp = time.Now().Add(p.timeout)
			}
			if time.Now().Add(wait).After(giveUp) {
				return err
			}
			stopping = nil // already stopped: only the wait is left
		}
		// Backing off from an outage, not synchronising with anything.
		t := time.NewTimer(wait)
		select {
		case <-t.C:
		case <-stopping:
			t.Stop()
		}
	}
}
