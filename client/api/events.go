package api

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"
)

// EventType names what happened (docs/api.md "Webhooks and events").
type EventType string

// The event types. The email.* events are one per recipient.
const (
	EventEmailQueued     EventType = "email.queued"     // accepted for delivery now (or its scheduled time came)
	EventEmailScheduled  EventType = "email.scheduled"  // accepted for later
	EventEmailDelivered  EventType = "email.delivered"  // the receiving server answered 250
	EventEmailDeferred   EventType = "email.deferred"   // a temporary failure; it will be retried
	EventEmailBounced    EventType = "email.bounced"    // a permanent failure
	EventEmailFailed     EventType = "email.failed"     // gave up after the retry window, or could not be attempted
	EventEmailSuppressed EventType = "email.suppressed" // the address is suppressed; not attempted
	EventEmailComplained EventType = "email.complained" // a complaint (ARF) came back
	EventEmailCanceled   EventType = "email.canceled"   // a scheduled send was canceled

	EventDomainVerified         EventType = "domain.verified"          // a domain became verified
	EventDomainFailed           EventType = "domain.failed"            // a domain failed
	EventDomainTemporaryFailure EventType = "domain.temporary_failure" // a verified domain's records went missing

	EventWebhookTest EventType = "webhook.test" // POST /v1/webhooks/{id}/test

	// EventEmailReceived: a message arrived for a receiving domain
	// (docs/api.md "Receiving mail"), one per message, not per recipient.
	EventEmailReceived EventType = "email.received"

	// EventEmailOpened and EventEmailClicked come back from tracked mail
	// (docs/api.md "Engagement tracking"): a recipient's first open (and
	// its first reader's open when the first looked automated), and each
	// click. Their data is EmailEventData with its Engagement.
	EventEmailOpened  EventType = "email.opened"
	EventEmailClicked EventType = "email.clicked"

	// EventAll subscribes a webhook endpoint to every type, present and
	// future. It is no event's type.
	EventAll EventType = "*"
)

// EventTypes returns every event type, in the order of the API reference
// (without EventAll).
func EventTypes() []EventType {
	return []EventType{
		EventEmailQueued, EventEmailScheduled, EventEmailDelivered, EventEmailDeferred, EventEmailBounced,
		EventEmailFailed, EventEmailSuppressed, EventEmailComplained, EventEmailCanceled,
		EventDomainVerified, EventDomainFailed, EventDomainTemporaryFailure, EventWebhookTest,
		EventEmailReceived, EventEmailOpened, EventEmailClicked,
	}
}

// IsEmail reports whether t is an email.* event of sent mail, whose data
// is EmailEventData: not email.received, whose data is a received
// message's.
func (t EventType) IsEmail() bool { return isEmailEvent(t) }

// IsDomain reports whether t is a domain.* event, whose data is
// DomainEventData.
func (t EventType) IsDomain() bool { return isDomainEvent(t) }

func isEmailEvent(t EventType) bool {
	return strings.HasPrefix(string(t), "email.") && t != EventEmailReceived
}
func isDomainEvent(t EventType) bool { return strings.HasPrefix(string(t), "domain.") }
func isTestEvent(t EventType) bool   { return t == EventWebhookTest }

// Event is the body of a webhook delivery (docs/api.md "Webhooks and
// events"): what happened, when (UTC, to the millisecond) and its data.
// The event's id is not in the body: it is the webhook-id header, the same
// on every retry and replay of the event, to deduplicate on.
type Event struct {
	Type      EventType       `json:"type"`
	Timestamp time.Time       `json:"timestamp"`
	Data      json.RawMessage `json:"data"`
}

// EmailData decodes the data of an email.* event.
func (e *Event) EmailData() (*EmailEventData, error) {
	return decodeData[EmailEventData](e.Type, e.Data, isEmailEvent)
}

// DomainData decodes the data of a domain.* event.
func (e *Event) DomainData() (*DomainEventData, error) {
	return decodeData[DomainEventData](e.Type, e.Data, isDomainEvent)
}

// TestData decodes the data of a webhook.test event.
func (e *Event) TestData() (*WebhookTestData, error) {
	return decodeData[WebhookTestData](e.Type, e.Data, isTestEvent)
}

// EventRecord is an event of the account as GET /v1/events lists it and
// POST /v1/webhooks/{id}/test answers it (OpenAPI schema EventRecord). Data
// is what a webhook delivery of it carries.
type EventRecord struct {
	// ID is the webhook-id of the event's deliveries.
	ID        string    `json:"id"`
	Type      EventType `json:"type"`
	CreatedAt time.Time `json:"createdAt"`
	// MessageID and Recipient are set on email events only.
	MessageID string          `json:"messageId,omitempty"`
	Recipient string          `json:"recipient,omitempty"`
	Data      json.RawMessage `json:"data"`
}

// EmailData decodes the data of an email.* event.
func (e *EventRecord) EmailData() (*EmailEventData, error) {
	return decodeData[EmailEventData](e.Type, e.Data, isEmailEvent)
}

// DomainData decodes the data of a domain.* event.
func (e *EventRecord) DomainData() (*DomainEventData, error) {
	return decodeData[DomainEventData](e.Type, e.Data, isDomainEvent)
}

// TestData decodes the data of a webhook.test event.
func (e *EventRecord) TestData() (*WebhookTestData, error) {
	return decodeData[WebhookTestData](e.Type, e.Data, isTestEvent)
}

// DeferralReason says why a recipient was put back in the queue
// (docs/api.md "How mail leaves"): an email.deferred event's reason, and a
// recipient's lastDeferralReason in the log.
type DeferralReason string

const (
	DeferralThrottled     DeferralReason = "throttled"      // the receiver said the sender goes too fast
	DeferralGreylisted    DeferralReason = "greylisted"     // the receiver greylists first contact
	DeferralSiteSuspended DeferralReason = "site_suspended" // its site was suspended after repeated throttling; nothing was sent
	DeferralTLSRequired   DeferralReason = "tls_required"   // a policy requires TLS the receiver did not give
	DeferralConnection    DeferralReason = "connection"     // the connection was refused, reset or timed out
	DeferralDNS           DeferralReason = "dns"            // the destination's records could not be looked up
	DeferralTemporary     DeferralReason = "temporary"      // any other temporary failure (4xx)
)

// DeferralReasons returns every deferral reason, in the order of the API
// reference.
func DeferralReasons() []DeferralReason {
	return []DeferralReason{DeferralThrottled, DeferralGreylisted, DeferralSiteSuspended, DeferralTLSRequired,
		DeferralConnection, DeferralDNS, DeferralTemporary}
}

// BounceType tells a hard bounce from a soft one.
type BounceType string

const (
	// BounceHard is a permanent mailbox failure (5.1.x): the address is
	// suppressed.
	BounceHard BounceType = "hard"
	// BounceSoft is any other bounce.
	BounceSoft BounceType = "soft"
)

// EmailEventData is the data of an email.* event (and the detail of a
// message's timeline entry): one recipient of one message.
type EmailEventData struct {
	MessageID string            `json:"messageId"`
	Recipient string            `json:"recipient"`
	From      string            `json:"from"` // the bare address
	Subject   string            `json:"subject"`
	Tags      map[string]string `json:"tags"`
	// SMTPCode, SMTPResponse and MX are left out until an attempt gave
	// them.
	SMTPCode     int    `json:"smtpCode,omitempty"`
	SMTPResponse string `json:"smtpResponse,omitempty"`
	MX           string `json:"mx,omitempty"`
	// Unencrypted is set when the SMTP session ran in clear text.
	Unencrypted bool `json:"unencrypted,omitempty"`
	// BounceType is set on email.bounced (and on a deferral a report
	// brought).
	BounceType BounceType `json:"bounceType,omitempty"`
	// Async is set on an event that a report received later brought (a
	// bounce or a complaint), not the SMTP exchange itself; ReportText is
	// the report's human-readable text (its first 2 KiB).
	Async      bool   `json:"async,omitempty"`
	ReportText string `json:"reportText,omitempty"`
	// Site is the destination site of the attempt: a provider's name
	// ("google") or the destination's MX hosts.
	Site string `json:"site,omitempty"`
	// Reason is why an email.deferred recipient was deferred.
	Reason DeferralReason `json:"reason,omitempty"`
	// PolicyFailure is set when the reply refused the sender's
	// authentication (docs/api.md "Delivery"): which record is missing,
	// and what to fix.
	PolicyFailure string `json:"policyFailure,omitempty"`
	// TLS is the TLS the attempt's SMTP session ran under; nil in clear
	// text, and on events of no attempt.
	TLS *TLSInfo `json:"tls,omitzero"`
	// Attempt counts the delivery attempts so far.
	Attempt int `json:"attempt"`
	// URL, UserAgent, IP and Machine are set on email.opened and
	// email.clicked only (docs/api.md "Engagement tracking"): the clicked
	// link's original address (clicks), the request's User-Agent, the
	// client's address truncated to its /24 (IPv4) or /48 (IPv6), and
	// whether the request looked automated (a mailbox image proxy, a link
	// scanner).
	URL       string `json:"url,omitempty"`
	UserAgent string `json:"userAgent,omitempty"`
	IP        string `json:"ip,omitempty"`
	Machine   bool   `json:"machine,omitempty"`
}

// TLSInfo is the TLS of an SMTP session with a recipient's MX host.
type TLSInfo struct {
	// Version is "TLS1.2" or "TLS1.3" (older servers: "TLS1.0", "TLS1.1").
	Version string `json:"version"`
	// Cipher is the cipher suite's IANA name.
	Cipher string `json:"cipher"`
	// Verified says the certificate was valid for the MX host's name.
	Verified bool `json:"verified"`
	// Policy is the TLS policy the session was made under.
	Policy TLSPolicy `json:"policy"`
}

// TLSPolicy names the policy of a delivery attempt (docs/api.md "TLS
// policy"): the strongest that applies.
type TLSPolicy string

const (
	TLSPolicyRequireTLS    TLSPolicy = "requiretls"
	TLSPolicyMTASTS        TLSPolicy = "mta-sts"
	TLSPolicyEnforced      TLSPolicy = "enforced"
	TLSPolicyOpportunistic TLSPolicy = "opportunistic"
)

// DomainEventData is the data of a domain.* event: the domain's status
// and each record's, without the values (GET /v1/domains/{domain} has
// them).
type DomainEventData struct {
	Domain  string              `json:"domain"`
	Status  DomainStatus        `json:"status"`
	Records []DomainEventRecord `json:"records"`
}

// DomainEventRecord is one record's state in a domain.* event.
type DomainEventRecord struct {
	Purpose RecordPurpose `json:"purpose"`
	Type    string        `json:"type"`
	Name    string        `json:"name"`
	Status  RecordStatus  `json:"status"`
	Problem string        `json:"problem,omitempty"`
}

// WebhookTestData is the data of a webhook.test event.
type WebhookTestData struct {
	WebhookID string `json:"webhookId"`
	Message   string `json:"message"`
}

// ReplayResult answers POST /v1/events/{eventId}/replay (OpenAPI schema
// ReplayResult): the event and the endpoints it is queued to again.
type ReplayResult struct {
	EventID   string   `json:"eventId"`
	Endpoints []string `json:"endpoints"`
}

// decodeData decodes raw as T when typ is of the kind want accepts.
func decodeData[T any](typ EventType, raw json.RawMessage, want func(EventType) bool) (*T, error) {
	var out T
	if !want(typ) {
		return nil, fmt.Errorf("mailroom: a %s event has no %T data", typ, out)
	}
	if err := json.Unmarshal(raw, &out); err != nil {
		return nil, fmt.Errorf("mailroom: decode the data of a %s event: %w", typ, err)
	}
	return &out, nil
}
