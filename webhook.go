package mailroom

import (
	"slices"
	"time"
)

// EventWebhookTest is the type of the event POST /v1/webhooks/{id}/test
// sends to one endpoint.
const EventWebhookTest = "webhook.test"

// EventTypes are every event type, in a fixed order that storage relies on
// (an endpoint's subscriptions are kept as a bit mask by position): new
// types are appended, never inserted.
var EventTypes = []string{
	EventEmailQueued, EventEmailScheduled, EventEmailDelivered, EventEmailDeferred, EventEmailBounced,
	EventEmailFailed, EventEmailSuppressed, EventEmailComplained, EventEmailCanceled,
	EventDomainVerified, EventDomainFailed, EventDomainTemporaryFailure, EventWebhookTest,
	EventEmailReceived, EventEmailOpened, EventEmailClicked,
}

// AllEventTypes is the subscription to every type, present and future.
const AllEventTypes = "*"

// IsEventType says whether typ is a known event type.
func IsEventType(typ string) bool { return slices.Contains(EventTypes, typ) }

// Webhook limits (docs/api.md "Webhooks and events").
const (
	// DefaultMaxWebhooks is how many endpoints an account may have unless
	// the operator says otherwise (serve --max-webhooks).
	DefaultMaxWebhooks = 20
	// MaxWebhookURLBytes bounds an endpoint's URL.
	MaxWebhookURLBytes = 2048
	// WebhookRotationOverlap is how long a rotated-out secret keeps signing
	// beside the new one, so that consumers can roll their configuration.
	WebhookRotationOverlap = 24 * time.Hour
	// WebhookDisableAfter is how long an endpoint may fail every attempt
	// before it is disabled, as Svix does.
	WebhookDisableAfter = 5 * 24 * time.Hour
	// WebhookTimeout bounds one attempt: a 2xx must arrive within it.
	WebhookTimeout = 15 * time.Second
	// MaxWebhookResponseExcerpt is how much of a response body an attempt
	// records.
	MaxWebhookResponseExcerpt = 1024
)

// WebhookEndpoint is where an account's events are delivered.
type WebhookEndpoint struct {
	ID          string // "wh_…"
	AccountID   string
	URL         string
	Description string
	// Events are the subscribed types as given, or ["*"] for all.
	Events  []string
	Enabled bool
	// Format is the shape of the requests it is sent: Mailroom's own, or
	// Resend's payload and event names.
	Format WebhookFormat
	// DisabledReason says why an endpoint is disabled ("" when enabled).
	DisabledReason string
	// SecretSealed is the signing key (the bytes that the whsec_ form
	// encodes), sealed with the endpoint id as associated data: it must be
	// read back to sign, so a digest cannot do.
	SecretSealed []byte
	// PreviousSecretSealed signs beside the current secret until
	// PreviousSecretUntil, after a rotation.
	PreviousSecretSealed []byte
	PreviousSecretUntil  *time.Time
	// FailingSince is the first failed attempt after the last success;
	// nil while the endpoint answers.
	FailingSince *time.Time
	CreatedAt    time.Time
	UpdatedAt    time.Time
}

// WebhookFormat is the payload an endpoint receives (docs/api.md
// "Webhooks and events", "Moving from Resend"). Whatever the format, every
// request is signed by Standard Webhooks and carries the svix-* headers
// too; the format decides the body alone.
type WebhookFormat string

const (
	// WebhookFormatMailroom is Mailroom's own body, {type, timestamp,
	// data}, with Mailroom's event types: the default.
	WebhookFormatMailroom WebhookFormat = "mailroom"
	// WebhookFormatResend is Resend's body, {type, created_at, data}, with
	// Resend's event names and data (package resend), so that a receiver
	// written for Resend reads it unchanged. An endpoint created through
	// Resend's POST /webhooks has it.
	WebhookFormatResend WebhookFormat = "resend"
)

// WebhookFormats are the formats, the default first.
var WebhookFormats = []WebhookFormat{WebhookFormatMailroom, WebhookFormatResend}

// Subscribes says whether the endpoint wants events of type typ.
func (e *WebhookEndpoint) Subscribes(typ string) bool {
	return slices.Contains(e.Events, AllEventTypes) || slices.Contains(e.Events, typ)
}

// PreviousSecretSigns says whether the secret a rotation replaced still
// signs beside the current one at now.
func (e *WebhookEndpoint) PreviousSecretSigns(now time.Time) bool {
	return e.PreviousSecretSealed != nil && e.PreviousSecretUntil != nil && now.Before(*e.PreviousSecretUntil)
}

// WebhookAttemptStatus is the outcome of one attempt.
type WebhookAttemptStatus string

const (
	WebhookAttemptSucceeded WebhookAttemptStatus = "succeeded"
	WebhookAttemptFailed    WebhookAttemptStatus = "failed"
)

// WebhookDelivery is one event on its way to one endpoint: a row of the
// outbox, written in the transaction of the event, claimed by one node at
// a time under a lease, and removed once it succeeds or is given up (its
// attempts stay, as the endpoint's log).
type WebhookDelivery struct {
	ID         string // "whd_…"
	AccountID  string
	EndpointID string
	// Attempts made so far.
	Attempts  int
	CreatedAt time.Time
	// DueAt is when the delivery was due before its claim: handing it
	// back unattempted restores it.
	DueAt      time.Time
	ClaimToken string
	// Event and Endpoint are read with the claim.
	Event    *Event
	Endpoint *WebhookEndpoint
}

// WebhookAttempt is one POST of a delivery, as GET
// /v1/webhooks/{id}/deliveries lists it.
type WebhookAttempt struct {
	ID         string // "wha_…"
	AccountID  string
	EndpointID string
	DeliveryID string
	EventID    string
	EventType  string
	Attempt    int
	Status     WebhookAttemptStatus
	// StatusCode is the response's status, 0 when none came.
	StatusCode int
	// Error says why the attempt failed, "" when it succeeded.
	Error        string
	Duration     time.Duration
	ResponseBody string // its first MaxWebhookResponseExcerpt bytes
	CreatedAt    time.Time
	// NextAttemptAt is when the delivery is tried again; nil after a
	// success or the last attempt.
	NextAttemptAt *time.Time
}

// WebhookOutcome is what one attempt changes: the attempt to log and the
// delivery's next state.
type WebhookOutcome struct {
	Delivery *WebhookDelivery
	Attempt  *WebhookAttempt
}

// Prefixes of webhook deliveries and attempts.
const (
	PrefixWebhookDelivery = "whd_"
	PrefixWebhookAttempt  = "wha_"
)
