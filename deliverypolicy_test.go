package mailroom

import (
	"testing"
	"time"
)

// A deferral's next attempt (docs/api.md "How mail leaves"): a first
// greylisting after GreylistRetry, a second on the schedule; the
// transport's RetryAt when it gives one; the schedule otherwise. Each
// carries its reason, into the event too.
func TestNewAttemptDeferralTimes(t *testing.T) {
	now := time.Date(2030, 1, 2, 3, 0, 0, 0, time.UTC)
	p := RetryPolicy{MinDelay: time.Minute, MaxDelay: time.Hour, Window: 72 * time.Hour, GreylistRetry: 5 * time.Minute}
	queued := func(attempts int, last DeferralReason) *QueuedRecipient {
		return &QueuedRecipient{Recipient: Recipient{MessageID: "msg_1", Address: "a@example.com", Attempts: attempts,
			LastDeferralReason: last}, Message: &MessageSummary{ID: "msg_1"}, QueuedAt: now.Add(-time.Minute)}
	}
	greylisted := RecipientResult{Outcome: Deferred, Code: 451, Enhanced: "4.7.1", Response: "Greylisted, try again later", Site: "mx.example.com"}
	retryAt := now.Add(42 * time.Second)
	for _, tc := range []struct {
		name   string
		q      *QueuedRecipient
		res    RecipientResult
		reason DeferralReason
		next   time.Time
	}{
		{"first greylisting", queued(0, ""), greylisted, DeferGreylisted, now.Add(5 * time.Minute)},
		{"greylisted again", queued(1, DeferGreylisted), greylisted, DeferGreylisted, now.Add(2 * time.Minute)},
		{"throttled, at the site's next place", queued(0, ""),
			RecipientResult{Outcome: Deferred, Code: 421, Enhanced: "4.7.0", Response: "Try again later", Reason: DeferThrottled, RetryAt: retryAt},
			DeferThrottled, retryAt},
		{"suspended, at its end", queued(3, DeferThrottled),
			RecipientResult{Outcome: Deferred, Enhanced: "4.4.5", Response: "suspended", Reason: DeferSiteSuspended, RetryAt: retryAt},
			DeferSiteSuspended, retryAt},
		{"a RetryAt already past is now", queued(0, ""),
			RecipientResult{Outcome: Deferred, Code: 421, Reason: DeferThrottled, RetryAt: now.Add(-time.Hour)}, DeferThrottled, now},
		{"other 4xx, on the schedule", queued(0, ""),
			RecipientResult{Outcome: Deferred, Code: 452, Enhanced: "4.2.2", Response: "Mailbox full"}, DeferTemporary, now.Add(time.Minute)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := NewAttempt(tc.q, tc.res, now, p, 1)
			r := a.Recipient
			if r.Status != RecipientDeferred || r.LastDeferralReason != tc.reason || r.NextAttemptAt == nil || !r.NextAttemptAt.Equal(tc.next) {
				t.Fatalf("status %s, reason %s, next %v; want deferred, %s, %v", r.Status, r.LastDeferralReason, r.NextAttemptAt, tc.reason, tc.next)
			}
			if a.Event.Email.Reason != tc.reason {
				t.Errorf("the event's reason %q, want %q", a.Event.Email.Reason, tc.reason)
			}
		})
	}
	// Delivered, the last reason stays as history, and the site is kept.
	a := NewAttempt(queued(1, DeferGreylisted), RecipientResult{Outcome: Delivered, Code: 250, Site: "mx.example.com"}, now, p, 1)
	if a.Recipient.LastDeferralReason != DeferGreylisted || a.Recipient.Site != "mx.example.com" || a.Event.Email.Reason != "" {
		t.Errorf("delivered after a greylisting: %+v, event reason %q", a.Recipient, a.Event.Email.Reason)
	}
}
