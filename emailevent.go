package mailroom

import (
	"encoding/json"
	"time"
)

// Email event types (docs/api.md "Webhooks and events"), written with the state change they tell of.
const (
	EventEmailQueued     = "email.queued"
	EventEmailScheduled  = "email.scheduled"
	EventEmailDelivered  = "email.delivered"
	EventEmailDeferred   = "email.deferred"
	EventEmailBounced    = "email.bounced"
	EventEmailFailed     = "email.failed"
	EventEmailSuppressed = "email.suppressed"
	EventEmailComplained = "email.complained"
	EventEmailCanceled   = "email.canceled"
	// EventEmailOpened and EventEmailClicked are in tracking.go.
)

// EmailEventData is the "data" of an email event (docs/api.md "Webhooks and events").
// Its first five fields are what the message and the event's own message
// and recipient hold; the rest, EmailEventDetail, is what the event alone
// tells. Storage keeps only the detail and fills in the rest when it reads
// the event (docs/design.md "How a message is stored"). EmailEventDetail is
// embedded, so its fields follow the first five in the JSON, as they
// always have.
type EmailEventData struct {
	MessageID string            `json:"messageId"`
	Recipient string            `json:"recipient"`
	From      string            `json:"from"`
	Subject   string            `json:"subject"`
	Tags      map[string]string `json:"tags"`
	EmailEventDetail
}

// EmailEventDetail is what an email event tells of its attempt or report,
// beyond the message and recipient it is of.
type EmailEventDetail struct {
	SMTPCode     int    `json:"smtpCode,omitempty"`
	SMTPResponse string `json:"smtpResponse,omitempty"`
	MX           string `json:"mx,omitempty"`
	// Unencrypted is set when the session ran in clear text.
	Unencrypted bool `json:"unencrypted,omitempty"`
	// BounceType is "hard" for a permanent mailbox failure (5.1.x), "soft"
	// for other bounces.
	BounceType string `json:"bounceType,omitempty"`
	// Async is set on an event that a report received later brought (a
	// DSN, a complaint), not the SMTP exchange itself.
	Async bool `json:"async,omitempty"`
	// ReportText is the human-readable part of that report, cut to
	// MaxReportText.
	ReportText string `json:"reportText,omitempty"`
	// Site is the destination site of the attempt.
	Site string `json:"site,omitempty"`
	// Reason is why an email.deferred recipient was deferred.
	Reason DeferralReason `json:"reason,omitempty"`
	// PolicyFailure says, when the reply refused the sender's
	// authentication (Microsoft's 5.7.515, Gmail's 5.7.26, …,
	// policyfailure.go), which record is missing and what to fix.
	PolicyFailure string `json:"policyFailure,omitempty"`
	// TLS is the TLS of the attempt's session (docs/api.md "TLS
	// policy"): null in clear text (always present on email.delivered),
	// absent on events of no session.
	TLS     EventTLS `json:"tls,omitzero"`
	Attempt int      `json:"attempt"`
	// Engagement is an email.opened or email.clicked event's url,
	// userAgent, ip and machine (tracking.go); nil, and absent from the
	// JSON, on every other event.
	*Engagement
}

// NewEmailEvent makes the event typ for recipient r of message m, its
// data typed (Event.Email): what the event alone tells is taken from r,
// the rest from m. A maker that knows more of the event (a report's
// text, that it came later) sets it on the event's Email.
func NewEmailEvent(m *MessageSummary, r *Recipient, typ string, now time.Time) *Event {
	tags := m.Tags
	if tags == nil {
		tags = map[string]string{}
	}
	data := &EmailEventData{
		MessageID: m.ID, Recipient: r.Address, From: m.From, Subject: m.Subject, Tags: tags,
		EmailEventDetail: EmailEventDetail{SMTPCode: r.SMTPCode, SMTPResponse: r.SMTPResponse, MX: r.MX, Unencrypted: r.Unencrypted,
			Attempt: r.Attempts, Site: r.Site, TLS: NewEventTLS(typ, r)},
	}
	if typ == EventEmailDeferred || typ == EventEmailFailed {
		// A recipient that fails at the end of its retry window fails for
		// the reason it was last deferred (tls_required for a domain
		// whose receivers never gave verified TLS).
		data.Reason = r.LastDeferralReason
	}
	if typ == EventEmailBounced {
		data.BounceType = "soft"
		if IsHardBounce(r.SMTPCode, r.SMTPResponse) {
			data.BounceType = "hard"
		}
	}
	if typ == EventEmailBounced || typ == EventEmailDeferred || typ == EventEmailFailed {
		data.MarkPolicyFailure()
	}
	return &Event{ID: NewID(PrefixEvent, now), AccountID: m.AccountID, Type: typ, CreatedAt: now.UTC(),
		MessageID: m.ID, Recipient: r.Address, Email: data}
}

// JSON is d as an event's "data" shows it (the API, webhooks).
func (d *EmailEventData) JSON() json.RawMessage {
	b, err := json.Marshal(d)
	if err != nil {
		panic("marshal email event data: " + err.Error()) // strings, ints, bools and a map of strings always marshal
	}
	return b
}

// MessageSummary is what events and the delivery worker need of a message
// without its content.
type MessageSummary struct {
	ID        string
	AccountID string
	From      string // the address alone
	Subject   string
	Tags      map[string]string
	Domain    string
	CreatedAt time.Time
	// RequireTLS is the message's RequireTLS.
	RequireTLS bool
	// Tracking is the message's Tracking: delivery composes each
	// recipient's copy when anything is tracked.
	Tracking Tracking
	// Category is the message's: a copy of tracked mail carries the
	// service's unsubscribe links only when it is marketing.
	Category Category
}

// Summary returns m's summary.
func (m *Message) Summary() *MessageSummary {
	return &MessageSummary{ID: m.ID, AccountID: m.AccountID, From: m.From.Address, Subject: m.Subject,
		Tags: m.Tags, Domain: m.Domain, CreatedAt: m.CreatedAt, RequireTLS: m.RequireTLS, Tracking: m.Tracking, Category: m.Category}
}
