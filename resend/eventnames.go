package resend

import (
	"slices"
	"strings"

	"github.com/mailroom/mailroom"
)

// eventNames pairs each of Resend's webhook event names
// (https://resend.com/docs/dashboard/webhooks/event-types; the Node SDK's
// WebhookEvent type) with the Mailroom event type it stands for. It is the
// one map between the two vocabularies: an endpoint's subscription given
// in Resend's names is stored as Mailroom's types (which the outbox's
// fan-out matches), shown back in Resend's names, and a delivery to a
// Resend-format endpoint is typed by it.
var eventNames = []struct {
	resend   string
	mailroom string
}{
	// Resend's "sent" is its API accepting the email: Mailroom's queued.
	{"email.sent", mailroom.EventEmailQueued},
	{"email.scheduled", mailroom.EventEmailScheduled},
	{"email.delivered", mailroom.EventEmailDelivered},
	{"email.delivery_delayed", mailroom.EventEmailDeferred},
	{"email.bounced", mailroom.EventEmailBounced},
	{"email.complained", mailroom.EventEmailComplained},
	{"email.failed", mailroom.EventEmailFailed},
	{"email.suppressed", mailroom.EventEmailSuppressed},
	{"email.received", mailroom.EventEmailReceived},
	// Opens and clicks of tracked mail (docs/api.md "Engagement
	// tracking"): the same names.
	{"email.opened", mailroom.EventEmailOpened},
	{"email.clicked", mailroom.EventEmailClicked},
}

// unsentEvents are Resend's event names that Mailroom does not send (yet):
// refused by name, so that a subscription copied from Resend says what is
// missing rather than that the name is unknown.
var unsentEvents = []string{
	"contact.created", "contact.updated", "contact.deleted", "contact.topics.updated",
	"domain.created", "domain.updated", "domain.deleted",
	"suppression.added", "suppression.removed",
	"topic.created", "topic.updated", "topic.deleted",
}

// EventName is Resend's name for the Mailroom event type typ. A type
// Resend has no event for (email.canceled, the domain events,
// webhook.test) keeps Mailroom's name, as does "*".
func EventName(typ string) string {
	for _, n := range eventNames {
		if n.mailroom == typ {
			return n.resend
		}
	}
	return typ
}

// EventNames is EventName of each type.
func EventNames(types []string) []string {
	out := make([]string, len(types))
	for i, t := range types {
		out[i] = EventName(t)
	}
	return out
}

// EventTypes reads a subscription given in Resend's names (POST and PATCH
// /webhooks) as Mailroom's event types. Besides Resend's names it takes
// what EventName shows for a type Resend lacks (Mailroom's own name, and
// "*"), so that what GET /webhooks/{id} shows can be sent back. A name
// Mailroom does not send is a validation error naming it; checking the
// list itself (not empty, its length) is webhook.Request's.
func EventTypes(names []string) ([]string, error) {
	var v mailroom.Validator
	out := make([]string, 0, len(names))
	for i, name := range names {
		switch typ := eventType(name); {
		case typ != "":
			out = append(out, typ)
		case slices.Contains(unsentEvents, name):
			v.AddAt("events", i, "Mailroom does not send %s events; the events it sends are %s", mailroom.OwnText(name), mailroom.OwnText(sentNames()))
		default:
			v.AddAt("events", i, "%q is not an event name; the events are %s", name, mailroom.OwnText(sentNames()))
		}
	}
	return out, v.Err()
}

// eventType is the Mailroom type of a name EventTypes takes, "" for none.
func eventType(name string) string {
	for _, n := range eventNames {
		if n.resend == name {
			return n.mailroom
		}
	}
	if name == mailroom.AllEventTypes || mailroom.IsEventType(name) && EventName(name) == name {
		return name
	}
	return ""
}

// sentNames lists the names EventTypes takes, for its messages.
func sentNames() string {
	var names []string
	for _, typ := range mailroom.EventTypes {
		if typ != mailroom.EventWebhookTest {
			names = append(names, EventName(typ))
		}
	}
	return strings.Join(names, ", ")
}
