package mailroom

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"log/slog"
	"math"
	"math/rand/v2"
	"strings"
	"sync"
	"time"
)

// Deliverer is the delivery worker (DESIGN.md §2): it claims due
// recipients, groups them by message and destination domain, composes and
// signs each message once (retries send the stored bytes), hands the
// deliveries to the Transport and records every outcome with its event.
type Deliverer struct {
	Store     MessageStore
	Domains   *Domains
	Composer  Composer
	Transport Transport
	Now       func() time.Time
	Log       *slog.Logger

	// RetryMinDelay is the first retry's delay; it doubles with each
	// attempt (with ±20% jitter) up to MaxRetryDelay.
	RetryMinDelay time.Duration
	MaxRetryDelay time.Duration
	// RetryWindow is how long after it was first queued a recipient is
	// retried before it fails.
	RetryWindow time.Duration
	// Lease is how long a claim holds recipients: longer than any SMTP
	// exchange, so that nothing is sent twice while its node lives.
	Lease time.Duration
	// Workers claim and deliver side by side; each claims up to Batch.
	Workers int
	Batch   int
	// Poll is how often an idle worker looks for due work that another
	// node queued or whose retry time came.
	Poll time.Duration
	// Observe, when set, is told of every recipient's attempt: its outcome
	// and how long the SMTP exchange took (for metrics).
	Observe func(outcome Outcome, exchange time.Duration)

	// wake is closed (and replaced) to wake every idle worker at once:
	// a broadcast that, unlike a token passed from worker to worker, is
	// used up by the wake-up it causes.
	wakeMu sync.Mutex
	wake   chan struct{}

	// domains caches sending domains briefly: every message of a domain
	// needs its key and return path, and re-reading the row (with its
	// records) for each one cost more than signing.
	domainsMu sync.Mutex
	domains   map[string]cachedDomain
}

type cachedDomain struct {
	domain  *Domain
	fetched time.Time
}

// domainCacheTTL bounds how long a worker signs with a domain row it read:
// a removed domain stops being used within it.
const domainCacheTTL = 30 * time.Second

// sendingDomain returns the account's domain, from the cache when fresh.
func (d *Deliverer) sendingDomain(ctx context.Context, accountID, name string) (*Domain, error) {
	key := accountID + "/" + name
	now := time.Now()
	d.domainsMu.Lock()
	c, ok := d.domains[key]
	d.domainsMu.Unlock()
	if ok && now.Sub(c.fetched) < domainCacheTTL {
		return c.domain, nil
	}
	dom, err := d.Domains.Store.Domain(ctx, accountID, name)
	if err != nil {
		return nil, err
	}
	d.domainsMu.Lock()
	if d.domains == nil {
		d.domains = map[string]cachedDomain{}
	}
	d.domains[key] = cachedDomain{domain: dom, fetched: now}
	d.domainsMu.Unlock()
	return dom, nil
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

// Wake tells idle workers that work is due now.
func (d *Deliverer) Wake() {
	d.wakeMu.Lock()
	defer d.wakeMu.Unlock()
	if d.wake != nil {
		close(d.wake)
	}
	d.wake = make(chan struct{})
}

// Run delivers until ctx ends.
func (d *Deliverer) Run(ctx context.Context) {
	var wg sync.WaitGroup
	for range max(1, d.Workers) {
		wg.Go(func() {
			for ctx.Err() == nil {
				// Taken before the pass: a Wake during it is not missed.
				woken := d.wakeChan()
				n, err := d.DeliverDue(ctx)
				if err != nil && ctx.Err() == nil {
					d.Log.Warn("delivery pass failed", "err", err)
				}
				if n > 0 && err == nil {
					continue // more may be due
				}
				select {
				case <-ctx.Done():
				case <-woken:
				case <-time.After(d.Poll):
				}
			}
		})
	}
	wg.Wait()
}

// DeliverDue claims one batch of due recipients, delivers them and records
// the outcomes; it returns how many it claimed.
func (d *Deliverer) DeliverDue(ctx context.Context) (int, error) {
	claimed, err := d.Store.ClaimDueRecipients(ctx, d.Now().UTC(), d.Lease, max(1, d.Batch))
	if err != nil || len(claimed) == 0 {
		return 0, err
	}
	type groupKey struct{ message, domain string }
	groups := map[groupKey][]*QueuedRecipient{}
	var order []groupKey
	for _, q := range claimed {
		k := groupKey{q.MessageID, q.Domain()}
		if groups[k] == nil {
			order = append(order, k)
		}
		groups[k] = append(groups[k], q)
	}
	var wg sync.WaitGroup
	for _, k := range order {
		wg.Go(func() {
			// Each group records its outcome as soon as its SMTP exchange
			// ends (the store shares the commit with its neighbours), so
			// that a crash repeats only the exchanges it interrupted. If
			// recording fails, the claim's lease runs out and the
			// recipients are delivered again: at least once, never lost.
			// The exchange must end inside the lease (a tenth of it is
			// kept for recording), or another node may take the recipients
			// over while this one still talks to their server.
			gctx, cancel := context.WithTimeout(ctx, d.Lease-d.Lease/10)
			attempts := d.deliverGroup(gctx, groups[k])
			cancel()
			if err := d.Store.RecordAttempts(context.WithoutCancel(ctx), attempts); err != nil {
				d.Log.Error("could not record delivery outcomes; they will be retried when the lease ends",
					"message_id", k.message, "err", err)
			}
		})
	}
	wg.Wait()
	return len(claimed), nil
}

// deliverGroup sends one message to its recipients at one domain.
func (d *Deliverer) deliverGroup(ctx context.Context, group []*QueuedRecipient) []*Attempt {
	first := group[0]
	raw, returnPath, err := d.signed(ctx, first.Message)
	if err != nil {
		return d.unsendable(group, err)
	}
	delivery := &Delivery{
		MessageID: first.MessageID,
		Domain:    first.Domain(),
		MailFrom:  envelopeSender(first.MessageID, returnPath, group),
		Data:      raw,
	}
	for _, q := range group {
		delivery.Recipients = append(delivery.Recipients, q.Address)
	}
	start := time.Now()
	results := d.Transport.Deliver(ctx, delivery)
	exchange := time.Since(start)
	out := make([]*Attempt, len(group))
	for i, q := range group {
		res := RecipientResult{Recipient: q.Address, Outcome: Deferred, Response: "no result from the transport"}
		if i < len(results) {
			res = results[i]
		}
		out[i] = d.outcome(q, res)
		if d.Observe != nil {
			d.Observe(res.Outcome, exchange)
		}
	}
	return out
}

// String names an outcome, for logs and metrics.
func (o Outcome) String() string {
	switch o {
	case Delivered:
		return "delivered"
	case Bounced:
		return "bounced"
	}
	return "deferred"
}

// signed returns the message's stored signed bytes, composing and signing
// them first if this is its first attempt, and its return-path domain.
// Stored bytes need no domain key: a message signed before its domain was
// removed is still sent (and shown) as it was signed.
func (d *Deliverer) signed(ctx context.Context, sum *MessageSummary) ([]byte, string, error) {
	m, raw, err := d.Store.MessageForDelivery(ctx, sum.ID)
	if err != nil {
		return nil, "", err
	}
	domain, err := d.sendingDomain(ctx, sum.AccountID, sum.Domain)
	switch {
	case err == nil:
	case raw != nil && IsCode(err, ECodeNotFound):
		return raw, d.Domains.Settings.ReturnPathDomain(sum.Domain), nil
	default:
		return nil, "", err
	}
	if raw != nil {
		return raw, domain.ReturnPathDomain, nil
	}
	raw, err = d.Compose(m, domain)
	if err != nil {
		return nil, "", err
	}
	raw, err = d.Store.SaveRaw(ctx, m.ID, raw)
	return raw, domain.ReturnPathDomain, err
}

// Compose renders and signs m with its domain's DKIM key.
func (d *Deliverer) Compose(m *Message, domain *Domain) ([]byte, error) {
	key, err := d.Domains.DKIMPrivateKey(domain)
	if err != nil {
		return nil, err
	}
	return d.Composer.Compose(m, DKIMKey{Domain: domain.Name, Selector: domain.DKIMSelector, PrivateKeyPKCS8: key})
}

// unsendable records that a group could not be attempted: the sending
// domain was removed (permanent) or storage failed (temporary).
func (d *Deliverer) unsendable(group []*QueuedRecipient, err error) []*Attempt {
	res := RecipientResult{Outcome: Deferred, Response: "could not prepare the message: " + ErrorCode(err)}
	if IsCode(err, ECodeNotFound) {
		res = RecipientResult{Outcome: Bounced, Response: "the sending domain was removed from the account before delivery"}
	}
	d.Log.Warn("could not prepare a message for delivery", "message_id", group[0].MessageID, "err", err)
	out := make([]*Attempt, len(group))
	for i, q := range group {
		res.Recipient = q.Address
		out[i] = d.outcome(q, res)
	}
	return out
}

// outcome turns a result into the recipient's next state and its event.
func (d *Deliverer) outcome(q *QueuedRecipient, res RecipientResult) *Attempt {
	now := d.Now().UTC()
	r := q.Recipient
	r.Attempts++
	r.LastAttemptAt = &now
	r.NextAttemptAt = nil
	r.SMTPCode, r.SMTPResponse, r.MX = res.Code, res.Response, res.MX
	a := &Attempt{Recipient: &r, Message: q.Message, LeaseUntil: q.LeaseUntil}
	var typ string
	switch res.Outcome {
	case Delivered:
		r.Status, typ = RecipientDelivered, EventEmailDelivered
	case Bounced:
		r.Status, typ = RecipientBounced, EventEmailBounced
		if IsHardBounce(res.Code, res.Enhanced+" "+res.Response) {
			a.Suppress = &Suppression{AccountID: q.Message.AccountID, Address: r.Address,
				Reason: SuppressedHardBounce, MessageID: r.MessageID, CreatedAt: now}
		}
	default:
		next := now.Add(d.retryDelay(r.Attempts))
		if next.After(q.QueuedAt.Add(d.RetryWindow)) {
			r.Status, typ = RecipientFailed, EventEmailFailed
		} else {
			r.Status, typ = RecipientDeferred, EventEmailDeferred
			r.NextAttemptAt, a.DueAt = &next, &next
		}
	}
	a.Event = NewEmailEvent(q.Message, &r, typ, now)
	return a
}

// retryDelay is the wait before attempt n+1: RetryMinDelay doubled for each
// attempt after the first, capped, with ±20% jitter so that recipients
// deferred together do not return together. Computed in float seconds, so
// large attempt counts cannot overflow.
func (d *Deliverer) retryDelay(attempts int) time.Duration {
	secs := d.RetryMinDelay.Seconds() * math.Pow(2, float64(max(0, attempts-1)))
	if limit := d.MaxRetryDelay.Seconds(); limit > 0 && secs > limit {
		secs = limit
	}
	secs *= 0.8 + 0.4*rand.Float64()
	return time.Duration(secs * float64(time.Second))
}

// envelopeSender is the MAIL FROM of a delivery (VERP): on the sending
// domain's bounce subdomain, with a token naming the message and, for a
// delivery to one recipient (the common case), that recipient, so that a
// later bounce can be matched without parsing its body. A delivery to
// several recipients at one domain shares one transaction, and its DSN
// names the recipient in Final-Recipient (RFC 3464 §2.3.2).
func envelopeSender(messageID, returnPath string, group []*QueuedRecipient) string {
	token := strings.TrimPrefix(messageID, PrefixMessage)
	if len(group) == 1 {
		sum := sha256.Sum256([]byte(strings.ToLower(group[0].Address)))
		token += "-" + hex.EncodeToString(sum[:4])
	}
	return "b-" + token + "@" + returnPath
}

// Raw returns the signed bytes of an account's message: those stored, or,
// before its first attempt, composed and stored now, so that what the log
// shows is exactly what will be sent.
func (d *Deliverer) Raw(ctx context.Context, accountID, messageID string) ([]byte, error) {
	m, _, err := d.Store.Message(ctx, accountID, messageID)
	if err != nil {
		return nil, err
	}
	raw, _, err := d.signed(ctx, m.Summary())
	if IsCode(err, ECodeNotFound) {
		return nil, Errorf(ECodeInvalidState, "The message was never composed, and its sending domain has been removed.")
	}
	return raw, err
}
