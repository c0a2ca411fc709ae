package mailroom

import (
	"math"
	"time"
)

// RetryPolicy decides when a deferred delivery is tried again and when it
// is given up (docs/design.md "How mail is delivered").
type RetryPolicy struct {
	// MinDelay is the first retry's delay; it doubles with each attempt up
	// to MaxDelay.
	MinDelay time.Duration
	MaxDelay time.Duration
	// Window is how long after it was first queued a recipient is retried
	// before it fails.
	Window time.Duration
	// GreylistRetry is the wait after a first greylisting (--greylist-retry):
	// greylisters let the same triplet through after a few minutes (RFC
	// 6647 §2.1), sooner than the schedule's later retries. Greylisted
	// again, a recipient follows the schedule.
	GreylistRetry time.Duration
}

// Delay is the wait before attempt n+1: MinDelay doubled for each attempt
// after the first, capped, then scaled by jitter (0.8 to 1.2 for the ±20%
// that keeps recipients deferred together from returning together).
// Computed in float seconds, so large attempt counts cannot overflow.
func (p RetryPolicy) Delay(attempts int, jitter float64) time.Duration {
	secs := p.MinDelay.Seconds() * math.Pow(2, float64(max(0, attempts-1)))
	if limit := p.MaxDelay.Seconds(); limit > 0 && secs > limit {
		secs = limit
	}
	return time.Duration(secs * jitter * float64(time.Second))
}

// Jitter maps a uniform random number in [0, 1) to the ±20% factor Delay
// takes.
func Jitter(uniform float64) float64 { return 0.8 + 0.4*uniform }

// NewAttempt turns the result of one exchange for a claimed recipient into
// its next state and the event that tells of it: 2xx delivered, 5xx bounced
// (a 5.1.x mailbox error also suppresses the address), anything else
// deferred until the retry window ends, then failed. A deferral carries its
// reason (the transport's, or ClassifyDeferral's) and is due again at the
// transport's RetryAt (a throttled site's next place, a suspension's end),
// after GreylistRetry for a first greylisting, or else on the schedule.
// jitter is Jitter's factor for the retry delay.
func NewAttempt(q *QueuedRecipient, res RecipientResult, now time.Time, p RetryPolicy, jitter float64) *Attempt {
	r := q.Recipient
	r.Attempts++
	r.LastAttemptAt = &now
	r.NextAttemptAt = nil
	r.SMTPCode, r.SMTPResponse, r.MX, r.Unencrypted, r.TLS = res.Code, res.Response, res.MX, res.Unencrypted, res.TLS
	if res.Site != "" {
		r.Site = res.Site
	}
	a := &Attempt{Recipient: &r, Message: q.Message, ClaimToken: q.ClaimToken}
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
		reason := res.Reason
		if reason == "" {
			reason = ClassifyDeferral(res.Code, res.Enhanced, res.Response, q.Recipient.Attempts == 0)
		}
		next := now.Add(p.Delay(r.Attempts, jitter))
		switch {
		case !res.RetryAt.IsZero():
			next = res.RetryAt
			if next.Before(now) {
				next = now
			}
		case reason == DeferGreylisted && q.Recipient.LastDeferralReason != DeferGreylisted && p.GreylistRetry > 0:
			next = now.Add(p.GreylistRetry)
		}
		r.LastDeferralReason = reason
		if next.After(q.QueuedAt.Add(p.Window)) {
			r.Status, typ = RecipientFailed, EventEmailFailed
		} else {
			r.Status, typ = RecipientDeferred, EventEmailDeferred
			r.NextAttemptAt, a.DueAt = &next, &next
		}
	}
	a.Event = NewEmailEvent(q.Message, &r, typ, now)
	return a
}

// String names an outcome, for logs and metrics.
func (o Outcome) String() string {
	switch o {
	case Delivered:
		return "delivered"
	case Bounced:
		return "bounced"
	case NotAttempted:
		return "not_attempted"
	}
	return "deferred"
}
