package mailroom

import (
	"bytes"
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
	// Concurrent calls may share one commit (group commit). m.Raw, when
	// set, is stored as the message's signed bytes, as SaveRaw would.
	AcceptMessage(ctx context.Context, m *Message) (AcceptResult, error)
	// AcceptMessages accepts ms as AcceptMessage accepts each one, all in
	// one transaction (one commit for a batch), in order: a message whose
	// key an earlier one of ms used is that one's duplicate. outcomes[i]
	// answers ms[i]; its Err is ECodeIdempotencyKeyReused or nil. An error
	// means nothing was stored.
	AcceptMessages(ctx context.Context, ms []*Message) (outcomes []AcceptOutcome, err error)
	// IdempotentMessage answers a request under an idempotency key the
	// account used before, as AcceptMessage would (Duplicate, or
	// ECodeIdempotencyKeyReused for another digest), without storing
	// anything; a key not used before is ECodeNotFound. It serves a retry
	// that could not be accepted again (its template is gone).
	IdempotentMessage(ctx context.Context, accountID, key string, digest []byte) (AcceptResult, error)
	// IdempotentMessages returns the messages the account stored under any
	// of keys, by key, in one read: a retried batch is answered from them
	// without rendering again what was accepted before.
	IdempotentMessages(ctx context.Context, accountID string, keys []string) (map[string]KeyedMessage, error)

	// ClaimDueRecipients claims the due, unclaimed recipients of up to
	// c.Limit messages for node c.Node under one fresh claim token, so
	// that several nodes never deliver one recipient at once. A claim ends
	// when its outcome is recorded or it is released: by its node, or by
	// NodeStore.ReleaseLostClaims once its node is found dead or its lease
	// has run out in the database's clock. Claims take whole messages:
	// every claimable recipient of a claimed message comes in the same
	// claim (less those at SkipDomains). A scheduled message that comes
	// due is started in the claim's transaction (StartScheduled): its
	// recipients become queued, or finish unattempted (suppressed since,
	// or the sending domain gone), and only those to send are returned.
	ClaimDueRecipients(ctx context.Context, c Claim) ([]*QueuedRecipient, error)
	// ReleaseClaims hands claimed recipients back unattempted: they are
	// due again at dueAt (their due time is kept when dueAt is nil). Only
	// recipients still under token are released.
	ReleaseClaims(ctx context.Context, token string, recipients []*QueuedRecipient, dueAt *time.Time) error
	// MessageForDelivery returns a message's stored signed bytes, or, until
	// it is composed (the bytes are nil), its content; a message whose
	// bytes are stored comes without content, which retries do not need.
	MessageForDelivery(ctx context.Context, messageID string) (*Message, []byte, error)
	// SaveRaw stores the signed bytes of a message once: if another node
	// stored them first, those are returned and must be sent instead.
	SaveRaw(ctx context.Context, messageID string, raw []byte) ([]byte, error)
	// SaveTrackedLinks stores a click-tracked message's links (their
	// original addresses, in order; docs/api.md "Engagement tracking")
	// once, before its first bytes: links stored before are kept, since
	// every composition of a message finds the same ones. A message that
	// is gone is ECodeNotFound.
	SaveTrackedLinks(ctx context.Context, messageID string, links []string) error
	// RecordAttempts stores the outcome of attempts (recipient states, due
	// times, their events, suppressions from hard bounces) and the
	// messages' derived statuses, in one transaction, and ends their
	// claims. An attempt whose claim is no longer current (it was released,
	// or its node was declared dead, and another claim may have taken the
	// recipient) is dropped with its event.
	RecordAttempts(ctx context.Context, attempts []*Attempt) error

	// ListScheduled lists an account's messages still scheduled (not yet
	// taken for delivery), soonest scheduledAt first.
	ListScheduled(ctx context.Context, accountID string, page Page) ([]*Message, string, error)
	// RescheduleMessage moves a scheduled message to at (its recipients
	// come due then); at not after now starts it at once, as a claim
	// would (queued, or finished unattempted), for the answer to say what
	// is true. CancelMessage cancels one: the message and each
	// recipient become canceled, with an email.canceled event each, at
	// now. Both take the message's lock, as a claim does, so that a
	// message is either taken for delivery or changed, never both: one
	// that is no longer scheduled, or whose recipients a claim holds, is
	// ECodeInvalidState; another account's is ECodeNotFound.
	RescheduleMessage(ctx context.Context, accountID, id string, at, now time.Time) error
	CancelMessage(ctx context.Context, accountID, id string, now time.Time) error

	// Message returns an account's message with recipients and its
	// timeline: its newest MaxTimelineEvents events, oldest first. When it
	// has more, the message's OlderEventsCursor lists the rest through
	// ListEvents.
	Message(ctx context.Context, accountID, id string) (*Message, []*Event, error)
	// ListMessages lists an account's messages newest first (oldest first
	// with f.OldestFirst).
	ListMessages(ctx context.Context, accountID string, f MessageFilter, page Page) ([]*Message, string, error)
	// MessageContent returns an account's message as Message does, without
	// its timeline, and with the content it was accepted with: HTML, Text,
	// Headers and MessageIDHeader. Attachments are left out (their bytes,
	// up to the message size limit, are the raw message's to show), and
	// so is the signed message (Raw).
	MessageContent(ctx context.Context, accountID, id string) (*Message, error)

	// DeleteExpiredMessages removes up to limit finished messages created
	// before cutoff, with their recipients and events, and says how many.
	DeleteExpiredMessages(ctx context.Context, cutoff time.Time, limit int) (int, error)

	SuppressionStore
}

// MaxTimelineEvents bounds the timeline of one message as the log answers
// it (docs/api.md "The email log"): a message with more events (a long
// retry of 50 recipients, or many reports) answers its newest ones, and a
// cursor to the older ones, rather than a body that grows without bound.
const MaxTimelineEvents = 500

// AcceptResult is the answer to a send.
type AcceptResult struct {
	MessageID string
	Status    MessageStatus
	Duplicate bool
}

// KeyedMessage is a message stored under an idempotency key.
type KeyedMessage struct {
	ID            string
	Status        MessageStatus
	RequestDigest []byte
}

// Answer is what a request with digest under the message's key is
// answered: a duplicate of it, or ECodeIdempotencyKeyReused when the
// request differs.
func (k KeyedMessage) Answer(digest []byte) (AcceptResult, error) {
	if !bytes.Equal(k.RequestDigest, digest) {
		return AcceptResult{}, Errorf(ECodeIdempotencyKeyReused,
			"The idempotency key was used before with a different request (message %s).", k.ID)
	}
	return AcceptResult{MessageID: k.ID, Status: k.Status, Duplicate: true}, nil
}

// AcceptOutcome answers one message of AcceptMessages.
type AcceptOutcome struct {
	Result AcceptResult
	// Err is ECodeIdempotencyKeyReused, or nil.
	Err error
}

// Claim asks for due work on behalf of a node.
type Claim struct {
	// Node is the claiming node's id (see NodeStore).
	Node string
	// Now is the node's time: recipients due at or before it are claimed.
	Now time.Time
	// Lease bounds the claim in the database's clock, so that skewed node
	// clocks cannot make two nodes hold one recipient.
	Lease time.Duration
	// Limit is the most messages to claim.
	Limit int
	// SkipDomains are recipient domains not to claim now (their
	// destinations are busy); a message's other recipients are claimed.
	SkipDomains []string
}

// QueuedRecipient is a claimed recipient with what delivery needs.
type QueuedRecipient struct {
	Recipient
	Message *MessageSummary
	// QueuedAt is when the recipient first became due: the retry window
	// counts from it.
	QueuedAt time.Time
	// ClaimToken fences the outcome: it is recorded only while the
	// recipient is still under this token.
	ClaimToken string
}

// Attempt is the outcome for one recipient, to be recorded. Recipient
// holds its new state; DueAt is its next try (nil when finished).
type Attempt struct {
	Recipient *Recipient
	Message   *MessageSummary
	// ClaimToken is the claim's token; the attempt is recorded only if the
	// recipient is still under that claim.
	ClaimToken string
	DueAt      *time.Time
	Event      *Event
	// Suppress adds the address to the account's suppression list.
	Suppress *Suppression
}

// MessageFilter narrows the email log (docs/api.md "The email log"). Empty fields do not
// filter.
type MessageFilter struct {
	Status MessageStatus
	// To and From match an address whatever its case (AddressKey).
	To   string
	From string
	// Tags must all match (docs/api.md "The email log": repeatable, all must match).
	Tags     []TagFilter
	Category Category
	// Template is a template's id ("tpl_…") or name: the messages
	// rendered from any of its versions.
	Template string
	Since    *time.Time
	Until    *time.Time
	// OlderThan and NewerThan bound the log by message ids (msg_…): only
	// the messages listed after OlderThan, or before NewerThan, the
	// message itself left out. The log's order is its ids' (an id is a
	// ULID of its creation time), so a message id is an exact position in
	// it, even among messages of one millisecond, where since and until
	// cannot tell them apart. An id is a position whatever account it is
	// of; a string that is no message id is a validation error.
	OlderThan, NewerThan string
	// OldestFirst lists the matches oldest first rather than newest
	// first. With NewerThan it is the page of messages just after a
	// known one, which is how a client pages back toward newer messages
	// (a client listing newest first reverses that page). It is part of
	// the filter so that a cursor is bound to its order (CursorScope).
	OldestFirst bool
	// Event keeps the messages some recipient of which opened, or
	// clicked (`?event=`); "" keeps all.
	Event EngagementFilter
}

// SuppressionStore keeps the addresses an account must not send to.
type SuppressionStore interface {
	// AddSuppression adds or keeps an address; an existing entry is
	// returned unchanged, unless it is an unsubscribe and s is for another
	// reason (SuppressionReason.Outranks): s replaces it then.
	AddSuppression(ctx context.Context, s *Suppression) (*Suppression, error)
	Suppression(ctx context.Context, accountID, address string) (*Suppression, error)
	ListSuppressions(ctx context.Context, accountID string, page Page) ([]*Suppression, string, error)
	DeleteSuppression(ctx context.Context, accountID, address string) error
}

// Suppression is an address an account does not send to (docs/api.md "Suppressions").
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
	// SuppressedUnsubscribe is a recipient's one-click unsubscribe (RFC
	// 8058): it stops marketing mail only (docs/api.md "Suppressions").
	SuppressedUnsubscribe SuppressionReason = "unsubscribe"
)

// Stops says whether an entry for this reason stops mail of category c:
// an unsubscribe stops marketing mail only, so that an order confirmation
// or a password reset still reaches whoever left a newsletter; every
// other reason stops all mail.
func (r SuppressionReason) Stops(c Category) bool {
	return r != SuppressedUnsubscribe || c == CategoryMarketing
}

// Outranks says whether an entry for reason r replaces one for old when
// both are added for an address: only an unsubscribe, which stops less
// than the others, is replaced (by a hard bounce, a complaint or a manual
// entry); any other entry stays what it was. Storage keeps this rule.
func (r SuppressionReason) Outranks(old SuppressionReason) bool {
	return old == SuppressedUnsubscribe && r != SuppressedUnsubscribe
}
