package api

import (
	"encoding/json"
	"time"
)

// MessageStatus is the state of a message as a whole (docs/api.md "The
// email log"), derived from its recipients' states.
type MessageStatus string

const (
	MessageScheduled          MessageStatus = "scheduled"           // waiting for its scheduledAt
	MessageCanceled           MessageStatus = "canceled"            // a scheduled send canceled before it was due
	MessageQueued             MessageStatus = "queued"              // some recipient still queued
	MessageDeferred           MessageStatus = "deferred"            // some recipient awaiting a retry
	MessageDelivered          MessageStatus = "delivered"           // all delivered
	MessagePartiallyDelivered MessageStatus = "partially_delivered" // all finished, some delivered
	MessageBounced            MessageStatus = "bounced"             // all finished, none delivered, one bounced or complained
	MessageFailed             MessageStatus = "failed"              // all finished, none delivered or bounced
	MessageSuppressed         MessageStatus = "suppressed"          // all suppressed
)

// MessageStatuses returns every message status, in the order of the API
// reference.
func MessageStatuses() []MessageStatus {
	return []MessageStatus{MessageScheduled, MessageCanceled, MessageQueued, MessageDeferred, MessageDelivered,
		MessagePartiallyDelivered, MessageBounced, MessageFailed, MessageSuppressed}
}

// RecipientStatus is one recipient's delivery state. A scheduled
// message's recipients are queued (their NextAttemptAt is its scheduledAt).
type RecipientStatus string

const (
	RecipientQueued     RecipientStatus = "queued"     // waiting for its first attempt (or its message's time)
	RecipientDeferred   RecipientStatus = "deferred"   // a temporary failure; will retry
	RecipientDelivered  RecipientStatus = "delivered"  // the receiving server answered 250
	RecipientBounced    RecipientStatus = "bounced"    // a permanent failure
	RecipientFailed     RecipientStatus = "failed"     // gave up after the retry window, or could not be attempted
	RecipientSuppressed RecipientStatus = "suppressed" // on the suppression list; never attempted
	RecipientComplained RecipientStatus = "complained" // an abuse report came back
	RecipientCanceled   RecipientStatus = "canceled"   // its scheduled send was canceled
)

// RecipientStatuses returns every recipient status, in the order of the
// API reference.
func RecipientStatuses() []RecipientStatus {
	return []RecipientStatus{RecipientQueued, RecipientDeferred, RecipientDelivered, RecipientBounced,
		RecipientFailed, RecipientSuppressed, RecipientComplained, RecipientCanceled}
}

// Message is a message of the email log (OpenAPI schema Message), as GET
// /v1/messages and GET /v1/scheduled list it (without Events) and GET
// /v1/messages/{messageId}, PATCH /v1/scheduled/{messageId} and DELETE
// /v1/scheduled/{messageId} show it (with Events).
type Message struct {
	ID     string        `json:"id"`
	Status MessageStatus `json:"status"`
	// From, To, Cc, Bcc and ReplyTo are the addresses as sent ("Name
	// <addr>" or "addr"); the lists are never null.
	From     string   `json:"from"`
	To       []string `json:"to"`
	Cc       []string `json:"cc"`
	Bcc      []string `json:"bcc"`
	ReplyTo  []string `json:"replyTo"`
	Subject  string   `json:"subject"`
	Category Category `json:"category"`
	// Tags is never null; {} when the message has none.
	Tags map[string]string `json:"tags"`
	// Template is the template version the message was rendered from (with
	// the name it had then); null for a message sent without one.
	Template       *TemplateRef `json:"template"`
	IdempotencyKey *string      `json:"idempotencyKey"`
	CreatedAt      time.Time    `json:"createdAt"`
	// ScheduledAt is when a scheduled send is (or was) due; null for a
	// message sent at once.
	ScheduledAt *time.Time `json:"scheduledAt"`
	// RequireTLS is the send's requireTls (RFC 8689 REQUIRETLS).
	RequireTLS bool `json:"requireTls"`
	// Tracking is what the message's copies are tracked for
	// (docs/api.md "Engagement tracking").
	Tracking Tracking `json:"tracking"`
	// Links are a click-tracked message's links in the order of its HTML
	// part, with their clicks: in the answers about one message only, and
	// left out until its copies were first made (and for a message not
	// click-tracked, or one whose HTML has no http(s) link).
	Links []TrackedLink `json:"links,omitempty"`
	// Recipients are in request order: to, cc, bcc.
	Recipients []Recipient `json:"recipients"`
	// Events is the timeline, oldest first: in the answers about one
	// message only, left out of lists. A message with more than 500
	// events has its newest 500 here, and OlderEventsCursor.
	Events []MessageEvent `json:"events,omitempty"`
	// OlderEventsCursor is present only when Events is cut to the newest
	// 500: given as cursor to GET /v1/events?messageId={id} (the message's
	// id as ID has it), it lists the older events, newest first.
	OlderEventsCursor *string `json:"olderEventsCursor,omitempty"`
}

// Recipient is one recipient of a Message and its delivery state (OpenAPI
// schema Recipient). The pointers are null until they have a value.
type Recipient struct {
	Address       string          `json:"address"`
	Status        RecipientStatus `json:"status"`
	Attempts      int             `json:"attempts"`
	LastAttemptAt *time.Time      `json:"lastAttemptAt"`
	// NextAttemptAt is when the next attempt is due; for a scheduled
	// message, its scheduledAt.
	NextAttemptAt *time.Time `json:"nextAttemptAt"`
	SMTPCode      *int       `json:"smtpCode"`
	SMTPResponse  *string    `json:"smtpResponse"`
	MX            *string    `json:"mx"`
	// Unencrypted says that the last attempt's SMTP session ran in clear
	// text.
	Unencrypted bool `json:"unencrypted"`
	// Site is the destination site of the last attempt (docs/api.md "How
	// mail leaves"): a provider's name ("google") or, for a destination
	// no profile names, its MX host names joined with commas.
	Site *string `json:"site"`
	// LastDeferralReason is why the recipient was last deferred; it stays
	// after a later delivery, as history.
	LastDeferralReason *DeferralReason `json:"lastDeferralReason"`
	// TLS is the TLS the last attempt's SMTP session ran under
	// (docs/api.md "TLS policy"); null in clear text, or before any
	// session was had.
	TLS *TLSInfo `json:"tls"`
	// Opens and Clicks count what came back from the recipient's copy of
	// a tracked message (docs/api.md "Engagement tracking"), automated
	// requests included (their events say machine); 0 when untracked.
	Opens  int `json:"opens"`
	Clicks int `json:"clicks"`
}

// MessageEvent is one entry of a message's timeline (OpenAPI schema
// Event): an email event of one recipient. Detail is the event's data, as
// its webhook deliveries carry it (EmailData decodes it).
type MessageEvent struct {
	ID        string    `json:"id"`
	Type      EventType `json:"type"`
	CreatedAt time.Time `json:"createdAt"`
	// Recipient is left out of an event that concerns no one recipient.
	Recipient string          `json:"recipient,omitempty"`
	Detail    json.RawMessage `json:"detail"`
}

// EmailData decodes Detail.
func (e *MessageEvent) EmailData() (*EmailEventData, error) {
	return decodeData[EmailEventData](e.Type, e.Detail, isEmailEvent)
}

// TemplateRef names one version of a template: a message's template, a
// template's layout.
type TemplateRef struct {
	ID      string `json:"id"`
	Name    string `json:"name"`
	Version int    `json:"version"`
}
