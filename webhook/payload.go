package webhook

import (
	"github.com/mailroom/mailroom"
	"github.com/mailroom/mailroom/resend"
)

// BodyFor is the body a delivery of ev to e sends, in e's format:
// Mailroom's own (Body), or Resend's (resend.NewPayload: Resend's event
// names and data). The signature is made over these bytes, which are the
// bytes sent.
func BodyFor(e *mailroom.WebhookEndpoint, ev *mailroom.Event) ([]byte, error) {
	if e.Format == mailroom.WebhookFormatResend {
		return resend.NewPayload(ev)
	}
	return Body(ev), nil
}
