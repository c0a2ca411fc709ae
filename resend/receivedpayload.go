package resend

import (
	"encoding/json"
	"fmt"

	"github.com/mailroom/mailroom"
)

// ReceivedData is the data of an email.received event in Resend's shape
// (https://resend.com/docs/dashboard/webhooks/event-types, "email.received";
// the Node SDK's EmailReceivedEvent): the message's id, which Mailroom's
// GET /v1/received/{id} takes, its header fields and its attachments'
// metadata. Mailroom's verdicts (authentication) are added under their
// own name: Resend has none, and a receiver that knows only Resend's
// fields ignores it.
type ReceivedData struct {
	EmailID     string               `json:"email_id"`
	CreatedAt   string               `json:"created_at"`
	From        string               `json:"from"`
	To          []string             `json:"to"`
	Cc          []string             `json:"cc"`
	Bcc         []string             `json:"bcc"`
	MessageID   string               `json:"message_id"`
	Subject     string               `json:"subject"`
	Attachments []ReceivedAttachment `json:"attachments"`

	Authentication mailroom.ReceivedAuthentication `json:"authentication"`
}

// ReceivedAttachment is one attachment's metadata, as Resend names it.
type ReceivedAttachment struct {
	ID                 string `json:"id"`
	Filename           string `json:"filename"`
	ContentType        string `json:"content_type"`
	ContentDisposition string `json:"content_disposition"`
	ContentID          string `json:"content_id,omitempty"`
	Size               int64  `json:"size"`
}

// NewReceivedData is Resend's data of the email.received event e.
func NewReceivedData(e *mailroom.Event) (*ReceivedData, error) {
	var d mailroom.ReceivedEventData
	if err := json.Unmarshal(e.Data, &d); err != nil {
		return nil, fmt.Errorf("the data of %s event %s: %w", e.Type, e.ID, err)
	}
	out := &ReceivedData{EmailID: d.ReceivedID, CreatedAt: d.ReceivedAt.UTC().Format(payloadTime), From: d.From,
		To: nonNil(d.To), Cc: nonNil(d.Cc), Bcc: []string{}, MessageID: d.MessageID, Subject: d.Subject,
		Attachments: make([]ReceivedAttachment, len(d.Attachments)), Authentication: d.Authentication}
	for i, a := range d.Attachments {
		disposition := "attachment"
		if a.ContentID != "" {
			disposition = "inline"
		}
		out.Attachments[i] = ReceivedAttachment{ID: a.ID, Filename: a.Filename, ContentType: a.ContentType,
			ContentDisposition: disposition, ContentID: a.ContentID, Size: a.Size}
	}
	return out, nil
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}
