package delivery

import (
	"context"
	"sync"
	"time"

	"github.com/mailroom/mailroom"
	"github.com/mailroom/mailroom/storageretry"
)

// deliverMessage delivers one claimed message: signed once, then one
// transaction per recipient domain, side by side (docs/design.md "How mail is delivered"), or,
// for marketing mail, one per recipient (deliverCopies). Each
// domain's outcome is recorded as soon as its exchange ends (the store
// shares the commit with its neighbours), and the connection that carried
// it starts its next exchange only then, so that a crash repeats only the
// exchanges it interrupted.
func (w *work) deliverMessage(msg []*mailroom.QueuedRecipient) {
	d := w.d
	if !w.mayStart() {
		w.handBack(msg, nil)
		return
	}
	signed, err := d.Signer.Signed(w.exchanges, msg[0].Message)
	if err != nil && !w.mayStart() {
		// Storage went away while the message was prepared: nothing was
		// sent, and this node may not send now.
		w.handBack(msg, nil)
		return
	}
	if err != nil {
		// Counted as an attempt (deferred, or bounced when the domain is
		// gone), so that a message that cannot be prepared backs off and
		// ends with the retry window instead of being claimed again at
		// once, forever.
		w.record(msg[0].MessageID, d.unsendable(msg, err))
		return
	}
	var wg sync.WaitGroup
	for _, group := range byDomain(msg) {
		if signed.Copy != nil {
			wg.Go(func() { w.deliverCopies(group, signed) })
			continue
		}
		wg.Go(func() { w.deliverGroup(group, signed.Raw, signed, w.exchangeDeadline()) })
	}
	wg.Wait()
}

// exchangeDeadline is when exchanges that start now must end: inside the
// lease (a tenth of it is kept for recording), or another node may take
// the recipients over while this one still talks to their server.
func (w *work) exchangeDeadline() time.Time { return time.Now().Add(w.d.Lease - w.d.Lease/10) }

// deliverCopies sends each recipient at one domain a copy of its own
// (marketing mail: each copy's RFC 8058 link names its recipient), one
// transaction each, one after another, over the connection the transport
// keeps to their host. Together they end inside the lease, as one group's
// exchange does: recipients not started by then are handed back.
func (w *work) deliverCopies(group []*mailroom.QueuedRecipient, signed *mailroom.Signed) {
	deadline := w.exchangeDeadline()
	for i, q := range group {
		if !w.mayStart() || !time.Now().Before(deadline) {
			w.handBack(group[i:], nil)
			return
		}
		data, err := signed.Copy(q.Address)
		if err != nil {
			w.record(q.MessageID, w.d.unsendable([]*mailroom.QueuedRecipient{q}, err))
			continue
		}
		w.deliverGroup([]*mailroom.QueuedRecipient{q}, data, signed, deadline)
	}
}

// mayStart reports whether a new exchange may begin: not while draining,
// not while this node's claims may be released by others, and not while
// storage refuses this node's writes (an exchange whose outcome cannot be
// recorded is sent again later, by this node or another).
func (w *work) mayStart() bool {
	return w.stop.Err() == nil && !w.d.storageDown.Load() && (w.d.Healthy == nil || w.d.Healthy())
}

// deliverGroup sends raw, signed's bytes for group, to its recipients at
// one domain, in one transaction that ends by deadline, and records the
// outcome.
func (w *work) deliverGroup(group []*mailroom.QueuedRecipient, raw []byte, signed *mailroom.Signed, deadline time.Time) {
	d := w.d
	if !w.mayStart() {
		w.handBack(group, nil)
		return
	}
	first := group[0]
	// The sessions that carry the delivery wait for its outcome's commit
	// before their next transaction (mailroom.Delivery.Recorded): closed
	// on every way out, once the outcome is written or given up.
	recorded := make(chan struct{})
	defer close(recorded)
	delivery := &mailroom.Delivery{MessageID: first.MessageID, Domain: first.Domain(), Data: raw, MayStart: w.mayStart,
		IPPool: signed.IPPool, FirstAttempt: true, TLSMode: signed.TLSMode.OrDefault(), RequireTLS: first.Message.RequireTLS,
		Recorded: recorded}
	greylisted := true
	for _, q := range group {
		delivery.Recipients = append(delivery.Recipients, q.Address)
		delivery.FirstAttempt = delivery.FirstAttempt && q.Attempts == 0
		greylisted = greylisted && q.LastDeferralReason == mailroom.DeferGreylisted && q.MX == first.MX
	}
	if greylisted {
		// Greylisters remember the triplet per host (RFC 6647 §2.1): the
		// retry goes where the first attempt was refused.
		delivery.PreferMX = first.MX
	}
	// The token covers this transaction's recipients (one, or one
	// domain's) and no other: a report to it cannot touch a recipient at
	// another domain. The same recipients get the same envelope sender on
	// every attempt, as greylisting needs.
	delivery.MailFrom = d.ReturnPaths.EnvelopeSender(first.MessageID, signed.ReturnPath, delivery.Recipients)

	ctx, cancel := context.WithDeadline(w.exchanges, deadline)
	start := time.Now()
	var results []mailroom.RecipientResult
	simulated := isSimulated(group)
	if simulated {
		results = d.simulate(group)
	} else {
		results = d.Transport.Deliver(ctx, delivery)
	}
	exchange := time.Since(start)
	cancel()
	// The node began to drain, or lost its storage, while the delivery
	// waited for a connection, or the site's next place is too far off to
	// wait for holding a message slot: what was not sent is handed back,
	// due at once or at that place.
	var notAttempted []*mailroom.QueuedRecipient
	var dueAt *time.Time
	for i, q := range group {
		if i < len(results) && results[i].Outcome == mailroom.NotAttempted {
			notAttempted = append(notAttempted, q)
			if at := results[i].RetryAt; !at.IsZero() {
				dueAt = &at
			}
		}
	}
	if len(notAttempted) > 0 {
		w.handBack(notAttempted, dueAt)
		if len(notAttempted) == len(group) {
			return
		}
	}

	now := d.Now().UTC()
	if simulated {
		d.simulatedRetry(results, now)
	}
	for _, res := range results {
		// The transport found the domain's site: claims now count and
		// skip the domain with it.
		d.destinations().learn(first.Domain(), res.Site, now)
	}
	attempts := make([]*mailroom.Attempt, 0, len(group))
	for i, q := range group {
		res := mailroom.RecipientResult{Recipient: q.Address, Outcome: mailroom.Deferred, Response: "no result from the transport"}
		if i < len(results) {
			res = results[i]
		}
		if res.Outcome == mailroom.NotAttempted {
			continue
		}
		attempts = append(attempts, mailroom.NewAttempt(q, res, now, d.Retry, jitter()))
		if d.Observe != nil {
			d.Observe(res.Outcome, exchange)
		}
	}
	d.observeDeferrals(attempts)
	if simulated {
		unsuppressed(attempts)
	}
	if w.record(first.MessageID, attempts) && simulated {
		w.complainSimulated(attempts)
	}
}

// record stores outcomes. The exchange happened: an outcome that is lost
// means the mail is sent again, so a storage outage is waited out for a
// while (see persist). If it still fails, the claim stays until its node is
// found dead or its lease ends, and the recipients are delivered again: at
// least once, never lost.
//
// It reports whether the outcomes were written.
func (w *work) record(messageID string, attempts []*mailroom.Attempt) bool {
	err := w.persist(func(ctx context.Context) error { return w.d.Store.RecordAttempts(ctx, attempts) })
	if err != nil {
		w.d.Log.Error("could not record delivery outcomes; the recipients will be delivered again",
			"message_id", messageID, "err", err)
	}
	return err == nil
}

// handBack releases recipients whose exchange never started, due at dueAt,
// or at once when it is nil.
func (w *work) handBack(group []*mailroom.QueuedRecipient, dueAt *time.Time) {
	err := w.persist(func(ctx context.Context) error {
		return w.d.Store.ReleaseClaims(ctx, group[0].ClaimToken, group, dueAt)
	})
	if err != nil {
		w.d.Log.Warn("could not hand back claimed recipients; they return when this node's claims are released",
			"message_id", group[0].MessageID, "err", err)
	}
}

// persist runs a write through storageretry, which waits out a storage
// outage: an outcome or a hand-back that is lost leaves the recipients
// claimed by this node until its lease ends, and an outcome lost means the
// mail is sent again. While the node runs it tries until storage answers
// (holding the message's slot); once it drains, for a bounded time more.
// Each try's answer also says whether storage is down, which stops new
// exchanges (mayStart) whose outcomes could not be recorded.
func (w *work) persist(write func(ctx context.Context) error) error {
	return storageretry.Write(w.stop, func(ctx context.Context) error {
		err := write(ctx)
		w.d.storageDown.Store(mailroom.IsCode(err, mailroom.ECodeUnavailable))
		return err
	})
}

// observeDeferrals tells ObserveDeferral of each deferral among attempts.
func (d *Deliverer) observeDeferrals(attempts []*mailroom.Attempt) {
	if d.ObserveDeferral == nil {
		return
	}
	for _, a := range attempts {
		if a.Recipient.Status == mailroom.RecipientDeferred {
			d.ObserveDeferral(a.Recipient.LastDeferralReason)
		}
	}
}

// unsendable is the outcome for recipients whose message could not be
// prepared: its sending domain was removed before the first attempt
// (permanent), or storage failed (temporary).
func (d *Deliverer) unsendable(group []*mailroom.QueuedRecipient, err error) []*mailroom.Attempt {
	res := mailroom.RecipientResult{Outcome: mailroom.Deferred, Response: "could not prepare the message: " + mailroom.ErrorCode(err)}
	if mailroom.IsCode(err, mailroom.ECodeNotFound) {
		res = mailroom.RecipientResult{Outcome: mailroom.Bounced, Response: "the sending domain was removed from the account before delivery"}
	}
	d.Log.Warn("could not prepare a message for delivery", "message_id", group[0].MessageID, "err", err)
	now := d.Now().UTC()
	out := make([]*mailroom.Attempt, len(group))
	for i, q := range group {
		res.Recipient = q.Address
		out[i] = mailroom.NewAttempt(q, res, now, d.Retry, jitter())
	}
	d.observeDeferrals(out)
	return out
}

// byDomain splits one message's recipients per domain, in their order.
func byDomain(msg []*mailroom.QueuedRecipient) [][]*mailroom.QueuedRecipient {
	index := map[string]int{}
	var out [][]*mailroom.QueuedRecipient
	for _, q := range msg {
		dom := q.Domain()
		i, ok := index[dom]
		if !ok {
			i = len(out)
			index[dom] = i
			out = append(out, nil)
		}
		out[i] = append(out[i], q)
	}
	return out
}
