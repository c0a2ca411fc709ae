package retention

import (
	"context"
	"log/slog"
	"time"

	"github.com/mailroom/mailroom"
)

// Sweeper removes messages, their content and timelines, and the
// webhook log, once they are older than Period (docs/api.md "Sending": the log entry and its idempotency key live
// as long as each other).
type Sweeper struct {
	Store mailroom.MessageStore
	// Webhooks, when set, loses its attempts, deliveries and the events of
	// no message (domains', tests') by the same period.
	Webhooks mailroom.WebhookStore
	Period   time.Duration
	Now      func() time.Time
	Log      *slog.Logger
}

// RunOnce deletes what has expired, in batches, and says how much.
func (r *Sweeper) RunOnce(ctx context.Context) (int, error) {
	total := 0
	cutoff := r.Now().Add(-r.Period)
	for {
		n, err := r.Store.DeleteExpiredMessages(ctx, cutoff, 500)
		total += n
		if err != nil {
			return total, err
		}
		if n < 500 {
			break
		}
	}
	for r.Webhooks != nil {
		n, err := r.Webhooks.DeleteExpiredWebhookData(ctx, cutoff, 500)
		total += n
		if err != nil || n == 0 {
			return total, err
		}
	}
	return total, nil
}

// Run deletes expired messages every interval until ctx ends.
func (r *Sweeper) Run(ctx context.Context, interval time.Duration) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		if n, err := r.RunOnce(ctx); err != nil && ctx.Err() == nil {
			r.Log.Warn("retention", "err", err)
		} else if n > 0 {
			r.Log.Info("retention removed expired messages", "count", n)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}
