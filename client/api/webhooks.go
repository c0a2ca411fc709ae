package api

import "time"

// WebhookCreateRequest is the body of POST /v1/webhooks (OpenAPI schema
// WebhookCreateRequest).
type WebhookCreateRequest struct {
	// URL is https (http too where the operator allows private targets),
	// at most 2,048 bytes, no user name or password, no fragment.
	URL string `json:"url"`
	// Events are the types to deliver, or []EventType{EventAll}.
	Events []EventType `json:"events"`
	// Description is at most 1,000 characters on one line.
	Description string `json:"description,omitempty"`
	// Format is the payload the endpoint is sent: WebhookFormatMailroom
	// (the default, when "") or WebhookFormatResend.
	Format WebhookFormat `json:"format,omitempty"`
}

// WebhookFormat is the payload an endpoint is sent. Every request is
// signed by Standard Webhooks and carries the same signature as svix-id,
// svix-timestamp and svix-signature too, whatever the format.
type WebhookFormat string

const (
	// WebhookFormatMailroom is Mailroom's own body, {type, timestamp,
	// data} (Event), with Mailroom's event types.
	WebhookFormatMailroom WebhookFormat = "mailroom"
	// WebhookFormatResend is Resend's body, {type, created_at, data}, with
	// Resend's event names (email.sent for email.queued,
	// email.delivery_delayed for email.deferred) and data, so that code
	// written for Resend's webhooks reads it unchanged.
	WebhookFormatResend WebhookFormat = "resend"
)

// WebhookUpdateRequest is the body of PATCH /v1/webhooks/{id} (OpenAPI
// schema WebhookUpdateRequest): a field left nil keeps its value, so the
// zero request changes nothing. With Go 1.26, new(false) or new("…") make
// the pointers; before it, a variable's address does.
type WebhookUpdateRequest struct {
	URL    *string     `json:"url,omitempty"`
	Events []EventType `json:"events,omitempty"`
	// Description "" clears the description.
	Description *string `json:"description,omitempty"`
	// Enabled false stops deliveries and drops the pending ones; true turns
	// the endpoint back on (also after it was disabled for failing).
	Enabled *bool `json:"enabled,omitempty"`
	// Format changes the payload the endpoint is sent.
	Format *WebhookFormat `json:"format,omitempty"`
}

// Webhook is an endpoint as the API shows it (OpenAPI schema Webhook):
// never its secret.
type Webhook struct {
	ID          string      `json:"id"`
	URL         string      `json:"url"`
	Description string      `json:"description"`
	Events      []EventType `json:"events"`
	Enabled     bool        `json:"enabled"`
	// DisabledReason says why a disabled endpoint is off; null while it is
	// enabled.
	DisabledReason *string `json:"disabledReason"`
	// Format is the payload the endpoint is sent: WebhookFormatMailroom
	// or WebhookFormatResend (one made through Resend's POST /webhooks).
	Format    WebhookFormat `json:"format"`
	CreatedAt time.Time     `json:"createdAt"`
	UpdatedAt time.Time     `json:"updatedAt"`
	// SecretRotation is there only while the secret a rotation replaced
	// still signs beside the new one.
	SecretRotation *SecretRotation `json:"secretRotation,omitempty"`
}

// SecretRotation says until when a replaced secret keeps signing.
type SecretRotation struct {
	PreviousSecretExpiresAt time.Time `json:"previousSecretExpiresAt"`
}

// WebhookCreated answers POST /v1/webhooks (OpenAPI schema
// WebhookCreated): the endpoint and, this once, its secret.
type WebhookCreated struct {
	Webhook
	// Secret is whsec_ and the base64 of 32 bytes: give it to
	// client.VerifyWebhook. Shown this once.
	Secret string `json:"secret"`
}

// WebhookSecret answers POST /v1/webhooks/{id}/rotate-secret (OpenAPI schema
// WebhookSecret): the new secret, shown this once, and until when the one
// it replaced keeps signing beside it (24 hours).
type WebhookSecret struct {
	Secret                  string    `json:"secret"`
	PreviousSecretExpiresAt time.Time `json:"previousSecretExpiresAt"`
}

// AttemptStatus is the outcome of one delivery attempt.
type AttemptStatus string

const (
	// AttemptSucceeded: a 2xx within 15 s.
	AttemptSucceeded AttemptStatus = "succeeded"
	// AttemptFailed: anything else (a 3xx included, which is not followed).
	AttemptFailed AttemptStatus = "failed"
)

// WebhookAttempt is one attempt of one delivery, as GET
// /v1/webhooks/{id}/deliveries lists them (OpenAPI schema WebhookAttempt).
type WebhookAttempt struct {
	ID      string    `json:"id"`
	EventID string    `json:"eventId"`
	Type    EventType `json:"type"`
	// Attempt counts from 1 per delivery; a replay starts again at 1.
	Attempt int           `json:"attempt"`
	Status  AttemptStatus `json:"status"`
	// StatusCode is null when no response came.
	StatusCode *int `json:"statusCode"`
	// Error says why the attempt failed; null when it succeeded.
	Error      *string `json:"error"`
	DurationMs int64   `json:"durationMs"`
	// ResponseBody holds the first 1 KiB of the response body.
	ResponseBody string    `json:"responseBody"`
	CreatedAt    time.Time `json:"createdAt"`
	// NextAttemptAt is when the delivery is tried again; null after a
	// success or the last attempt.
	NextAttemptAt *time.Time `json:"nextAttemptAt"`
}
