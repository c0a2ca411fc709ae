package mailroom

import "slices"

// RecipientStatus is a recipient's delivery state (docs/api.md "The email log").
type RecipientStatus string

const (
	RecipientScheduled  RecipientStatus = "scheduled"
	RecipientQueued     RecipientStatus = "queued"
	RecipientDeferred   RecipientStatus = "deferred"
	RecipientDelivered  RecipientStatus = "delivered"
	RecipientBounced    RecipientStatus = "bounced"
	RecipientFailed     RecipientStatus = "failed"
	RecipientSuppressed RecipientStatus = "suppressed"
	RecipientComplained RecipientStatus = "complained"
	RecipientCanceled   RecipientStatus = "canceled"
)

// Finished reports whether no more delivery will be attempted.
func (s RecipientStatus) Finished() bool {
	switch s {
	case RecipientScheduled, RecipientQueued, RecipientDeferred:
		return false
	}
	return true
}

// MessageStatus is the state of a message as a whole (docs/api.md "The email log").
type MessageStatus string

const (
	MessageScheduled          MessageStatus = "scheduled"
	MessageCanceled           MessageStatus = "canceled"
	MessageQueued             MessageStatus = "queued"
	MessageDeferred           MessageStatus = "deferred"
	MessageDelivered          MessageStatus = "delivered"
	MessagePartiallyDelivered MessageStatus = "partially_delivered"
	MessageBounced            MessageStatus = "bounced"
	MessageFailed             MessageStatus = "failed"
	MessageSuppressed         MessageStatus = "suppressed"
)

// messageStatuses lists every message status, in the order of docs/api.md "The email log".
var messageStatuses = []MessageStatus{
	MessageScheduled, MessageCanceled, MessageQueued, MessageDeferred, MessageDelivered,
	MessagePartiallyDelivered, MessageBounced, MessageFailed, MessageSuppressed,
}

// Valid reports whether s is a message status.
func (s MessageStatus) Valid() bool { return slices.Contains(messageStatuses, s) }

// DeriveMessageStatus computes a message's status from its recipients'
// states, by the rules of docs/api.md "The email log", in the order they are listed there.
func DeriveMessageStatus(recipients []RecipientStatus) MessageStatus {
	count := map[RecipientStatus]int{}
	for _, s := range recipients {
		count[s]++
	}
	n := len(recipients)
	switch {
	case n == 0:
		return MessageQueued
	case count[RecipientScheduled] > 0:
		return MessageScheduled
	case count[RecipientCanceled] > 0 && count[RecipientCanceled]+count[RecipientSuppressed] == n:
		// A canceled scheduled send: those already suppressed when it
		// was accepted stay so.
		return MessageCanceled
	case count[RecipientQueued] > 0:
		return MessageQueued
	case count[RecipientDeferred] > 0:
		return MessageDeferred
	case count[RecipientDelivered] == n:
		return MessageDelivered
	case count[RecipientDelivered] > 0:
		return MessagePartiallyDelivered
	case count[RecipientSuppressed] == n:
		return MessageSuppressed
	case count[RecipientBounced] > 0 || count[RecipientComplained] > 0:
		return MessageBounced
	}
	return MessageFailed
}
