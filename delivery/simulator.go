package delivery

import (
	"context"
	"time"

	"github.com/mailroom/mailroom"
)

// Test addresses (docs/api.md "Test addresses"): recipients at
// mailroom.SimulatorDomain are composed and signed like any, and then
// settled here instead of by the Transport, in every delivery mode (MX,
// relay, capture): no DNS lookup, no connection, nothing leaves. Their
// results go through NewAttempt and RecordAttempts as a receiver's reply
// would, so their states, events and webhooks are a real outcome's; what
// a real outcome adds to the suppression list is dropped.

// maxSimulatedComplaintEvents bounds the complaints a recipient may get,
// as inbound bounds reports' events (its maxReportEvents).
const maxSimulatedComplaintEvents = 3

// simulatedComplaintText is the complaint's report text, which a real
// complaint takes from the feedback report (RFC 5965 §2).
const simulatedComplaintText = "Simulated complaint: a test address at " + mailroom.SimulatorDomain +
	" reports every message delivered to complained@ as unwanted."

// isSimulated says whether a group (one domain's recipients) is for the
// test domain.
func isSimulated(group []*mailroom.QueuedRecipient) bool {
	_, ok := mailroom.Simulated(group[0].Address)
	return ok
}

// simulate is the Transport's results for a group at the test domain.
func (d *Deliverer) simulate(group []*mailroom.QueuedRecipient) []mailroom.RecipientResult {
	out := make([]mailroom.RecipientResult, len(group))
	for i, q := range group {
		out[i] = mailroom.SimulatedResult(q.Address, q.Attempts)
	}
	return out
}

// simulatedRetry sets when the deferrals among results, made at now, are
// retried: after the schedule's first delay exactly (--retry-min-delay),
// without its jitter, so that a test knows when.
func (d *Deliverer) simulatedRetry(results []mailroom.RecipientResult, now time.Time) {
	for i := range results {
		if results[i].Outcome == mailroom.Deferred {
			results[i].RetryAt = now.Add(d.Retry.MinDelay)
		}
	}
}

// unsuppressed drops, from the attempts of test addresses, the suppression
// a hard bounce would add: a test must not leave entries behind.
func unsuppressed(attempts []*mailroom.Attempt) {
	for _, a := range attempts {
		if _, ok := mailroom.Simulated(a.Recipient.Address); ok {
			a.Suppress = nil
		}
	}
}

// complainSimulated brings the complaint of each complained@ recipient
// just delivered, as a feedback loop's report would be applied
// (mailroom.ReportStore.RecordReport): the recipient becomes complained,
// with an async email.complained event, and no suppression entry.
func (w *work) complainSimulated(attempts []*mailroom.Attempt) {
	d := w.d
	if d.Reports == nil {
		return
	}
	for _, a := range attempts {
		r := a.Recipient
		if o, ok := mailroom.Simulated(r.Address); !ok || o != mailroom.SimulateComplained || r.Status != mailroom.RecipientDelivered {
			continue
		}
		now := d.Now().UTC()
		if !now.After(*r.LastAttemptAt) {
			// The complaint follows the delivery, also in the log's order.
			now = r.LastAttemptAt.Add(time.Microsecond)
		}
		ev := mailroom.NewEmailEvent(a.Message, r, mailroom.EventEmailComplained, now)
		ev.Email.EmailEventDetail = mailroom.EmailEventDetail{Async: true, ReportText: simulatedComplaintText, Attempt: r.Attempts}
		o := &mailroom.ReportOutcome{MessageID: r.MessageID, Address: r.Address, Status: mailroom.RecipientComplained,
			SMTPCode: r.SMTPCode, SMTPResponse: r.SMTPResponse, Event: ev, MaxAsync: maxSimulatedComplaintEvents}
		err := w.persist(func(ctx context.Context) error { return d.Reports.RecordReport(ctx, o) })
		if err != nil {
			d.Log.Error("could not record a test address's complaint", "message_id", r.MessageID, "err", err)
		}
	}
}
