package mailroom

import (
	"context"
	"time"
)

// MessageStore keeps messages, their recipients (the delivery queue) and
// the suppression list.
type MessageStore interface {
	// AcceptMessage durably stores m with its recipients and their first
	// events in one transaction, checking the idempotency key in the same
	// transaction: a key the account used before with the same
	// RequestDigest returns the first message's id with Duplicate set; with
	// another digest it is ECodeIdempotencyKeyReused. Recipients on the
	// account's suppression list are stored suppressed, not queued.
	// Concurrent calls may share one commit (group commit).
	AcceptMessage(ctx context.Context, m *Message) (AcceptResult, error)

	// ClaimDueRecipients leases up to limit recipients due at now, pushing
	// their due time to now+lease before anything is dialled, so that a
	// crash mid-delivery cannot loop, and several nodes never deliver one
	// recipient at once.
	ClaimDueRecipients(ctx context.Context, now time.Time, lease time.Duration, limit int) ([]*QueuedRecipient, error)
	// MessageForDelivery returns a message's content and its stored signed
	// bytes (nil until composed).
	MessageForDelivery(ctx context.Context, messageID string) (*Message, []byte, error)
	// SaveRaw stores the signed bytes of a message once: if another node
	// stored them first, those are returned and must be sent instead.
	SaveRaw(ctx context.Context, messageID string, raw []byte) ([]byte, error)
	// RecordAttempts stores the outcome of attempts (recipient states, due
	// times, their events, suppressions from hard bounces) and the
	// messages' derived statuses, in one transaction. An attempt whose
	// claim has been superseded (its lease ended and another claim took
	// the recipient) is dropped with its event.
	RecordAttempts(ctx context.Context, attempts []*Attempt) error

	// Message returns an account's message with recipients and events.
	Message(ctx context.Context, accountID, id string) (*Message, []*Event, error)
	// ListMessages lists an account's messages newest first.
	ListMessages(ctx context.Context, accountID string, f MessageFilter, page Page) ([]*Message, string, error)

	// DeleteExpiredMessages removes up to limit finished messages created
	// before cutoff, with their recipients and events, and says how many.
	DeleteExpiredMessages(ctx context.Context, cutoff time.Time, limit int) (int, error)

	SuppressionStore
}

// AcceptResult is the answer to a send.
type AcceptResult struct {
	MessageID string
	Status    MessageStatus
	Duplicate bool
}

// QueuedRecipient is a claimed recipient with what delivery needs.
type QueuedRecipient struct {
	Recipient
	Message *MessageSummary
	// QueuedAt is when the recipient first became due: the retry window
	// counts from it.
	QueuedAt time.Time
	// LeaseUntil is when this claim ends. It fences the outcome: a worker
	// whose lease ran out (and whose recipient another worker claimed
	// since) records nothing.
	LeaseUntil time.Time
}

// Attempt is the outcome for one recipient, to be recorded. Recipient
// holds its new state; DueAt is its next try (nil when finished).
type Attempt struct {
	Recipient *Recipient
	Message   *MessageSummary
	// LeaseUntil is the claim's lease end; the attempt is recorded only if
	// the recipient is still under that claim.
	LeaseUntil time.Time
	DueAt      *time.Time
	Event      *Event
	// Suppress adds the address to the account's suppression list.
	Suppress *Suppression
}

// MessageFilter narrows the email log (API.md §6). Empty fields do not
// filter.
type MessageFilter struct {
	Status   MessageStatus
	To       string
	From     string
	TagKey   string
	TagValue string
	Category Category
	Since    *time.Time
	Until    *time.Time
}

// SuppressionStore keeps the addresses an account must not send to.
type SuppressionStore interface {
	// AddSuppression adds or keeps an address; an existing entry is
	// returned unchanged.
	AddSuppression(ctx context.Context, s *Suppression) (*Suppression, error)
	Suppression(ctx context.Context, accountID, address string) (*Suppression, error)
	ListSuppressions(ctx context.Context, accountID string, page Page) ([]*Suppression, string, error)
	DeleteSuppression(ctx context.Context, accountID, address string) error
}

// Suppression is an address an account does not send to (API.md §10).
type Suppression struct {
	AccountID string
	Address   string
	Reason    SuppressionReason
	MessageID string
	CreatedAt time.Time
}

// SuppressionReason says why an address is suppressed.
type SuppressionReason string

const (
	SuppressedHardBounce SuppressionReason = "hard_bounce"
	SuppressedComplaint  SuppressionReason = "complaint"
	SuppressedManual     SuppressionReason = "manual"
)
