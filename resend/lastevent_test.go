package resend

import (
	"testing"

	"github.com/mailroom/mailroom"
)

func TestLastEvent(t *testing.T) {
	rcpts := func(sts ...mailroom.RecipientStatus) []*mailroom.Recipient {
		var out []*mailroom.Recipient
		for _, st := range sts {
			out = append(out, &mailroom.Recipient{Status: st})
		}
		return out
	}
	for _, c := range []struct {
		recipients []mailroom.RecipientStatus
		want       string
	}{
		{[]mailroom.RecipientStatus{mailroom.RecipientScheduled}, EventScheduled},
		{[]mailroom.RecipientStatus{mailroom.RecipientCanceled, mailroom.RecipientSuppressed}, EventCanceled},
		{[]mailroom.RecipientStatus{mailroom.RecipientQueued, mailroom.RecipientDelivered}, EventQueued},
		{[]mailroom.RecipientStatus{mailroom.RecipientDeferred, mailroom.RecipientDelivered}, EventDeliveryDelayed},
		{[]mailroom.RecipientStatus{mailroom.RecipientDelivered}, EventDelivered},
		{[]mailroom.RecipientStatus{mailroom.RecipientSuppressed}, EventSuppressed},
		{[]mailroom.RecipientStatus{mailroom.RecipientFailed}, EventFailed},
		{[]mailroom.RecipientStatus{mailroom.RecipientBounced}, EventBounced},
		{[]mailroom.RecipientStatus{mailroom.RecipientComplained}, EventComplained},
		{[]mailroom.RecipientStatus{mailroom.RecipientBounced, mailroom.RecipientComplained}, EventComplained},
		// Partly delivered: what happened to the others, which came later.
		{[]mailroom.RecipientStatus{mailroom.RecipientDelivered, mailroom.RecipientBounced}, EventBounced},
		{[]mailroom.RecipientStatus{mailroom.RecipientDelivered, mailroom.RecipientComplained}, EventComplained},
		{[]mailroom.RecipientStatus{mailroom.RecipientDelivered, mailroom.RecipientFailed}, EventFailed},
		// Suppressed at accept, before the delivery.
		{[]mailroom.RecipientStatus{mailroom.RecipientDelivered, mailroom.RecipientSuppressed}, EventDelivered},
	} {
		m := &mailroom.Message{Status: mailroom.DeriveMessageStatus(c.recipients), Recipients: rcpts(c.recipients...)}
		if got := LastEvent(m); got != c.want {
			t.Errorf("%v (%s): %s, want %s", c.recipients, m.Status, got, c.want)
		}
	}
}

// Opens and clicks stand where delivered would: a click after an open,
// an open after the delivery; a bounce beside them still names the
// message.
func TestLastEventOfTrackedMail(t *testing.T) {
	for _, c := range []struct {
		recipients []*mailroom.Recipient
		want       string
	}{
		{[]*mailroom.Recipient{{Status: mailroom.RecipientDelivered}}, EventDelivered},
		{[]*mailroom.Recipient{{Status: mailroom.RecipientDelivered, Opens: 1}}, EventOpened},
		{[]*mailroom.Recipient{{Status: mailroom.RecipientDelivered, Opens: 3}, {Status: mailroom.RecipientDelivered, Clicks: 1}}, EventClicked},
		{[]*mailroom.Recipient{{Status: mailroom.RecipientDelivered, Clicks: 2}, {Status: mailroom.RecipientSuppressed}}, EventClicked},
		{[]*mailroom.Recipient{{Status: mailroom.RecipientDelivered, Clicks: 2}, {Status: mailroom.RecipientBounced}}, EventBounced},
		{[]*mailroom.Recipient{{Status: mailroom.RecipientDelivered, Opens: 1}, {Status: mailroom.RecipientDeferred}}, EventDeliveryDelayed},
	} {
		var sts []mailroom.RecipientStatus
		for _, r := range c.recipients {
			sts = append(sts, r.Status)
		}
		m := &mailroom.Message{Status: mailroom.DeriveMessageStatus(sts), Recipients: c.recipients}
		if got := LastEvent(m); got != c.want {
			t.Errorf("%v (%s): %s, want %s", sts, m.Status, got, c.want)
		}
	}
}
