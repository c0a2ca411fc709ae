package resend

import (
	"slices"

	"github.com/mailroom/mailroom"
)

// Resend's last_event names, a sent email's state
// (https://resend.com/docs/api-reference/emails/retrieve-email; the
// Node SDK's GetEmailResponseSuccess lists them).
const (
	EventQueued          = "queued"
	EventScheduled       = "scheduled"
	EventSent            = "sent"
	EventDelivered       = "delivered"
	EventDeliveryDelayed = "delivery_delayed"
	EventBounced         = "bounced"
	EventComplained      = "complained"
	EventCanceled        = "canceled"
	EventFailed          = "failed"
	EventSuppressed      = "suppressed"
	EventOpened          = "opened"
	EventClicked         = "clicked"
)

// LastEvent names a message's state as Resend's last_event does, from its
// status and its recipients' (docs/api.md "The email log"), so that a
// message reads the same in a list (which has no timeline) as alone.
//
// A message with one recipient maps one to one. With several, Resend's
// last_event is the latest thing that happened to the email, and so is
// this: a complaint comes after a delivery, and a bounce or a final
// failure after the deliveries it sits beside, so a message some of whose
// recipients had mail delivered and others not (partially_delivered)
// names the latter (complained, else bounced, else failed), and
// delivered when the others were suppressed at accept, before anything
// was sent.
//
// "sent" is never named: Resend says sent when it has handed the mail to
// its provider, a step with no counterpart when Mailroom talks to the
// recipient's server itself; a message goes from queued to delivered
// (or delivery_delayed, bounced, failed).
//
// "opened" and "clicked" come after a delivery, so they stand where
// delivered would (docs/api.md "Engagement tracking"): clicked when some
// recipient of a tracked message clicked, else opened when some recipient
// opened, counting the automated requests too (an image proxy's open is
// an open as far as the message's state goes; the events say machine).
// A bounce, a complaint or a final failure beside the deliveries still
// names the message, as before.
func LastEvent(m *mailroom.Message) string {
	last := lastDeliveryEvent(m)
	if last != EventDelivered {
		return last
	}
	switch {
	case slices.ContainsFunc(m.Recipients, func(r *mailroom.Recipient) bool { return r.Clicks > 0 }):
		return EventClicked
	case slices.ContainsFunc(m.Recipients, func(r *mailroom.Recipient) bool { return r.Opens > 0 }):
		return EventOpened
	}
	return last
}

// lastDeliveryEvent is LastEvent before engagement: what the delivery of
// the message's recipients came to.
func lastDeliveryEvent(m *mailroom.Message) string {
	switch m.Status {
	case mailroom.MessageScheduled:
		return EventScheduled
	case mailroom.MessageCanceled:
		return EventCanceled
	case mailroom.MessageQueued:
		return EventQueued
	case mailroom.MessageDeferred:
		return EventDeliveryDelayed
	case mailroom.MessageDelivered:
		return EventDelivered
	case mailroom.MessageSuppressed:
		return EventSuppressed
	case mailroom.MessageBounced, mailroom.MessagePartiallyDelivered:
		has := func(st mailroom.RecipientStatus) bool {
			return slices.ContainsFunc(m.Recipients, func(r *mailroom.Recipient) bool { return r.Status == st })
		}
		switch {
		case has(mailroom.RecipientComplained):
			return EventComplained
		case has(mailroom.RecipientBounced):
			return EventBounced
		case has(mailroom.RecipientFailed):
			return EventFailed
		case has(mailroom.RecipientDelivered):
			return EventDelivered
		}
		return EventBounced
	}
	return EventFailed
}
