package mailroom

import (
	"context"
	"time"
)

// WebhookStore keeps webhook endpoints, the outbox of deliveries and the
// log of attempts (docs/design.md "How an event becomes a webhook").
//
// The outbox is filled by storage itself: every event written with a state
// change (an accept, a delivery's outcome, a domain check) fans out, in the
// same transaction, into one delivery per enabled endpoint of its account
// that subscribes to its type. A rolled-back change leaves no delivery, and
// a committed one cannot lose its deliveries.
type WebhookStore interface {
	// CreateWebhook inserts e unless its account has max endpoints
	// already (a validation error naming the limit).
	CreateWebhook(ctx context.Context, e *WebhookEndpoint, max int) error
	// Webhook finds an account's endpoint; another account's is
	// ECodeNotFound.
	Webhook(ctx context.Context, accountID, id string) (*WebhookEndpoint, error)
	// ListWebhooks lists an account's endpoints newest first.
	ListWebhooks(ctx context.Context, accountID string, page Page) ([]*WebhookEndpoint, string, error)
	// UpdateWebhook applies c to an account's endpoint in one statement
	// and returns the endpoint as it now is: fields c leaves nil keep what
	// they hold, even when the dispatcher changes them meanwhile. Turning
	// an endpoint off drops its pending deliveries: events are not
	// delivered to an endpoint for the time it was off. Turning it on
	// clears its reason and failing time.
	UpdateWebhook(ctx context.Context, accountID, id string, c WebhookChange, now time.Time) (*WebhookEndpoint, error)
	// RotateWebhookSecret makes sealed the endpoint's secret and the
	// secret it replaces the previous one, signing until previousUntil,
	// in one statement: two rotations at once leave one of their secrets
	// current and the other previous, never a secret that was answered
	// but never signs.
	RotateWebhookSecret(ctx context.Context, accountID, id string, sealed []byte, previousUntil, now time.Time) (*WebhookEndpoint, error)
	// DeleteWebhook removes an endpoint with its deliveries and attempts.
	DeleteWebhook(ctx context.Context, accountID, id string) error

	// InsertEventFor writes e with one delivery to each of the endpoints
	// named (a webhook.test event), instead of fanning it out.
	InsertEventFor(ctx context.Context, e *Event, endpointIDs []string) error
	// AddWebhookDeliveries queues the stored event eventID again to the
	// endpoints named (a replay): new deliveries, the same event.
	AddWebhookDeliveries(ctx context.Context, accountID, eventID string, endpointIDs []string, now time.Time) error

	// ClaimWebhookDeliveries leases due deliveries of enabled endpoints,
	// with their events and endpoints, as ClaimDueRecipients leases mail:
	// each is attempted by one node at a time, and a lease that runs out
	// (its node died) lets another claim it.
	ClaimWebhookDeliveries(ctx context.Context, c WebhookClaim) ([]*WebhookDelivery, error)
	// RecordWebhookOutcomes logs attempts and moves their deliveries on:
	// removed after a success or the last attempt, due again at the
	// attempt's NextAttemptAt otherwise. A failure starts the endpoint's
	// failing time (a success clears it); an endpoint failing since
	// disableBefore or earlier is disabled. An outcome whose claim was
	// superseded changes nothing.
	RecordWebhookOutcomes(ctx context.Context, outcomes []*WebhookOutcome, disableBefore time.Time) error
	// ReleaseWebhookClaims hands deliveries back unattempted (shutdown).
	ReleaseWebhookClaims(ctx context.Context, deliveries []*WebhookDelivery) error
	// WebhookBacklog counts the pending deliveries and gives the creation
	// time of the oldest (zero when none), for the metrics.
	WebhookBacklog(ctx context.Context) (pending int, oldest time.Time, err error)

	// ListWebhookAttempts lists an endpoint's attempts newest first.
	ListWebhookAttempts(ctx context.Context, accountID, endpointID string, f WebhookAttemptFilter, page Page) ([]*WebhookAttempt, string, error)
	// DeleteExpiredWebhookData removes, oldest first and at most limit of
	// each, the events that belong to no message, the attempts and the
	// deliveries created before cutoff (retention).
	DeleteExpiredWebhookData(ctx context.Context, cutoff time.Time, limit int) (int, error)
}

// WebhookChange is what a PATCH of an endpoint changes; nil is no change.
type WebhookChange struct {
	URL         *string
	Description *string
	Events      []string
	Enabled     *bool
	Format      *WebhookFormat
	// DisabledReason is shown while the endpoint is off (with Enabled
	// false).
	DisabledReason string
}

// WebhookClaim is what a node asks of ClaimWebhookDeliveries.
type WebhookClaim struct {
	Node  string
	Now   time.Time
	Lease time.Duration
	// Limit bounds the claim; PerEndpoint bounds the deliveries of one
	// endpoint in it, so that one busy endpoint cannot fill a claim.
	Limit       int
	PerEndpoint int
	// SkipEndpoints are endpoints this node has as many attempts in flight
	// to as it allows: their deliveries wait, and others' go first.
	SkipEndpoints []string
}

// WebhookAttemptFilter narrows GET /v1/webhooks/{id}/deliveries.
type WebhookAttemptFilter struct {
	EventID string
	Status  WebhookAttemptStatus // "" for any
}

// EventFilter narrows GET /v1/events.
type EventFilter struct {
	Type      string
	MessageID string
	// Since keeps events created at or after it.
	Since *time.Time
}
