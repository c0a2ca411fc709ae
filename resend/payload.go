package resend

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/mailroom/mailroom"
)

// Resend's webhook payload (https://resend.com/docs/dashboard/webhooks/
// event-types; the Node SDK's WebhookEventPayload, resend 6.38:
// EmailSentEvent … EmailSuppressedEvent): {type, created_at, data}, the
// data of an email event {email_id, created_at, from, to, subject, tags}
// and, by event, bounce {type, subType, message}, failed {reason},
// suppressed {type, message} or click {ipAddress, link, timestamp,
// userAgent}. A webhook endpoint of format resend is sent
// this instead of Mailroom's own body (webhook.Body), signed the same way.

// Payload is the body of a webhook request in Resend's shape.
type Payload struct {
	Type string `json:"type"`
	// CreatedAt is when the event happened, as Mailroom's own body says it
	// (RFC 3339 with milliseconds, UTC), which is Resend's form too.
	CreatedAt string          `json:"created_at"`
	Data      json.RawMessage `json:"data"`
}

// EmailData is the data of an email event.
type EmailData struct {
	// EmailID is the message id, which GET /emails/{id} takes.
	EmailID string `json:"email_id"`
	// CreatedAt is when the message was accepted.
	CreatedAt string `json:"created_at"`
	From      string `json:"from"`
	// To is the recipient the event is of: Mailroom's email events are
	// each of one recipient (a message to three has three
	// email.delivered), where Resend's list the email's To.
	To      []string          `json:"to"`
	Subject string            `json:"subject"`
	Tags    map[string]string `json:"tags"`

	Bounce     *Bounce     `json:"bounce,omitempty"`
	Failed     *Failed     `json:"failed,omitempty"`
	Suppressed *Suppressed `json:"suppressed,omitempty"`
	Click      *Click      `json:"click,omitempty"`
}

// Click is an email.clicked event's click, as Resend's Node SDK types it
// (EmailClickedEvent): where the click came from and went. ipAddress is
// Mailroom's truncated address (an IPv4 /24, an IPv6 /48), never the
// whole one. Mailroom's machine flag has no place in Resend's shape: a
// receiver that needs it subscribes in Mailroom's format. email.opened
// has no data of its own in Resend's payload beyond the email's.
type Click struct {
	IPAddress string `json:"ipAddress"`
	Link      string `json:"link"`
	Timestamp string `json:"timestamp"`
	UserAgent string `json:"userAgent"`
}

// Bounce is an email.bounced event's bounce. Resend names its kinds as
// Amazon SES does: type Permanent or Transient, subType General or a
// kind (NoEmail, MailboxFull, MessageTooLarge).
type Bounce struct {
	Type    string `json:"type"`
	SubType string `json:"subType"`
	// Message is the receiver's reply, or the report's text for a bounce
	// a report brought later.
	Message string `json:"message"`
}

// Failed is an email.failed event's failure.
type Failed struct {
	Reason string `json:"reason"`
}

// Suppressed is an email.suppressed event's reason.
type Suppressed struct {
	Type    string `json:"type"`
	Message string `json:"message"`
}

// payloadTime is the form of the payload's times: Mailroom's own body's.
const payloadTime = "2006-01-02T15:04:05.000Z07:00"

// NewPayload is the body a Resend-format endpoint is sent for e. An email
// event is typed by Resend's name (EventName) and its data rewritten in
// Resend's shape. An event Resend has none like (email.canceled has
// Resend's email data under its own name; the domain events and
// webhook.test keep Mailroom's name and data) is sent in Resend's
// envelope, so that a receiver verifies it and can ignore its type.
func NewPayload(e *mailroom.Event) ([]byte, error) {
	p := Payload{Type: EventName(e.Type), CreatedAt: e.CreatedAt.UTC().Format(payloadTime), Data: e.Data}
	if e.Type == mailroom.EventEmailReceived {
		d, err := NewReceivedData(e)
		if err != nil {
			return nil, err
		}
		if p.Data, err = json.Marshal(d); err != nil {
			return nil, err
		}
		return json.Marshal(p)
	}
	if e.Email != nil || strings.HasPrefix(e.Type, "email.") {
		d, err := emailEventData(e)
		if err != nil {
			return nil, err
		}
		data := NewEmailData(e.Type, d)
		if e.Type == mailroom.EventEmailClicked && d.Engagement != nil {
			data.Click = &Click{IPAddress: d.IP, Link: d.URL, Timestamp: p.CreatedAt, UserAgent: d.UserAgent}
		}
		if p.Data, err = json.Marshal(data); err != nil {
			return nil, err
		}
	}
	if p.Data == nil {
		p.Data = json.RawMessage("{}")
	}
	return json.Marshal(p)
}

// emailEventData is e's data, typed: as it was made, or as storage gave
// it back.
func emailEventData(e *mailroom.Event) (*mailroom.EmailEventData, error) {
	if e.Email != nil {
		return e.Email, nil
	}
	var d mailroom.EmailEventData
	if err := json.Unmarshal(e.Data, &d); err != nil {
		return nil, fmt.Errorf("the data of %s event %s: %w", e.Type, e.ID, err)
	}
	return &d, nil
}

// NewEmailData is Resend's data of an email event of type typ (Mailroom's).
func NewEmailData(typ string, d *mailroom.EmailEventData) EmailData {
	out := EmailData{EmailID: d.MessageID, From: d.From, To: []string{d.Recipient}, Subject: d.Subject, Tags: d.Tags}
	if out.Tags == nil {
		out.Tags = map[string]string{}
	}
	if at, ok := mailroom.IDTime(d.MessageID, mailroom.PrefixMessage); ok {
		out.CreatedAt = at.Format(payloadTime)
	}
	switch typ {
	case mailroom.EventEmailBounced:
		out.Bounce = newBounce(d)
	case mailroom.EventEmailFailed:
		out.Failed = &Failed{Reason: failedReason(d)}
	case mailroom.EventEmailSuppressed:
		out.Suppressed = &Suppressed{Type: "OnAccountSuppressionList",
			Message: "Mailroom did not send to this address: it is on the account's suppression list (a past hard bounce, a complaint, an unsubscribe or an entry added through the API)."}
	}
	return out
}

// newBounce names a bounce as Resend does: hard (a 5.1.x mailbox failure,
// mailroom.IsHardBounce) is Permanent, any other Transient; the enhanced
// status code (RFC 3463) gives the kind where it has one of Resend's.
func newBounce(d *mailroom.EmailEventData) *Bounce {
	b := &Bounce{Type: "Transient", SubType: "General", Message: d.SMTPResponse}
	if d.BounceType == "hard" {
		b.Type = "Permanent"
	}
	if d.Async && d.ReportText != "" || b.Message == "" {
		b.Message = d.ReportText
	}
	code := mailroom.EnhancedCode(d.SMTPResponse)
	_, detail, _ := strings.Cut(code, ".") // "1.1" of "5.1.1"
	switch detail {
	case "1.1", "1.10":
		b.SubType = "NoEmail" // RFC 3463 §3.2: bad destination mailbox address
	case "2.2":
		b.SubType = "MailboxFull" // §3.3: mailbox full
	case "2.3", "3.4":
		b.SubType = "MessageTooLarge" // §3.3, §3.4: message too large
	}
	return b
}

// failedReason says why a recipient failed: the last reply, or why its
// last attempt was deferred when no reply came.
func failedReason(d *mailroom.EmailEventData) string {
	switch {
	case d.SMTPResponse != "":
		return d.SMTPResponse
	case d.Reason != "":
		return "Mailroom gave up after retrying; the last attempt was deferred (" + string(d.Reason) + ")."
	}
	return "Mailroom gave up delivering the email."
}
