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
	// Received, when set, loses the mail received before the same
	// period (docs/api.md "Receiving mail"), with its attachments; its
	// email.received events go with the events of no message (Webhooks).
	Received mailroom.ReceivedStore
	Period   time.Duration
	// Audit, when set, loses its entries older than AuditPeriod
	// (--audit-retention, docs/api.md "Audit log"), which is its own: an
	// account's changes are kept far longer than its mail.
	Audit       mailroom.AuditStore
	AuditPeriod time.Duration
	Now         func() time.Time
	Log         *slog.Logger
}

// auditBatch bounds one deletion of audit entries, so that retention
// holds the write lock briefly, a batch at a time.
const auditBatch = 500

// receivedBatch bounds one deletion of received mail: fewer than the
// messages' 500, as each may hold up to --receive-max-size of raw bytes
// and its attachments.
const receivedBatch = 100

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
		if err != nil {
			return total, err
		}
		if n == 0 {
			break
		}
	}
	for r.Received != nil {
		n, err := r.Received.DeleteReceivedBefore(ctx, cutoff, receivedBatch)
		total += n
		if err != nil {
			return total, err
		}
		if n < receivedBatch {
			break
		}
	}
	n, err := r.sweepAudit(ctx)
	return total + n, err
}

// sweepAudit deletes the audit entries older than AuditPeriod, in batches.
func (r *Sweeper) sweepAudit(ctx context.Context) (int, error) {
	if r.Audit == nil || r.AuditPeriod <= 0 {
		return 0, nil
	}
	cutoff := r.Now().Add(-r.AuditPeriod)
	total := 0
	for {
		n, err := r.Audit.DeleteExpiredAuditEntries(ctx, cutoff, auditBatch)
		total += n
		if err != nil || n < auditBatch {
			return total, err
		}
	}
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
