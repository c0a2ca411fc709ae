package client

import "github.com/mailroom/mailroom/client/api"

// The types of package api, under the same names, so that one import is
// enough.
type (
	// List is one page of a list route.
	List[T any] = api.List[T]

	// Sending.
	SendRequest      = api.SendRequest
	AddressList      = api.AddressList
	Attachment       = api.Attachment
	Category         = api.Category
	SendResult       = api.SendResult
	SendStatus       = api.SendStatus
	BatchSendRequest = api.BatchSendRequest

	// The email log.
	Message         = api.Message
	MessageStatus   = api.MessageStatus
	Recipient       = api.Recipient
	RecipientStatus = api.RecipientStatus
	MessageEvent    = api.MessageEvent
	TemplateRef     = api.TemplateRef

	// Engagement tracking.
	Tracking         = api.Tracking
	TrackingOverride = api.TrackingOverride
	TrackedLink      = api.TrackedLink

	// Received mail.
	ReceivedSummary        = api.ReceivedSummary
	ReceivedMessage        = api.ReceivedMessage
	ReceivedAttachment     = api.ReceivedAttachment
	ReceivedAuthentication = api.ReceivedAuthentication
	ReceivedHeader         = api.ReceivedHeader
	DKIMSignatureResult    = api.DKIMSignatureResult
	AuthResult             = api.AuthResult
	ReceivedEventData      = api.ReceivedEventData

	// Scheduled sends.
	RescheduleRequest = api.RescheduleRequest

	// Events and webhooks.
	Event                = api.Event
	EventType            = api.EventType
	EventRecord          = api.EventRecord
	EmailEventData       = api.EmailEventData
	DomainEventData      = api.DomainEventData
	DomainEventRecord    = api.DomainEventRecord
	WebhookTestData      = api.WebhookTestData
	BounceType           = api.BounceType
	DeferralReason       = api.DeferralReason
	TLSInfo              = api.TLSInfo
	TLSPolicy            = api.TLSPolicy
	ReplayResult         = api.ReplayResult
	Webhook              = api.Webhook
	WebhookCreateRequest = api.WebhookCreateRequest
	WebhookUpdateRequest = api.WebhookUpdateRequest
	WebhookFormat        = api.WebhookFormat
	WebhookCreated       = api.WebhookCreated
	WebhookSecret        = api.WebhookSecret
	SecretRotation       = api.SecretRotation
	WebhookAttempt       = api.WebhookAttempt
	AttemptStatus        = api.AttemptStatus

	// Templates.
	Template              = api.Template
	TemplateSummary       = api.TemplateSummary
	TemplateRequest       = api.TemplateRequest
	TemplateRenderRequest = api.TemplateRenderRequest
	TemplateRendered      = api.TemplateRendered

	// Domains.
	Domain              = api.Domain
	DomainCreateRequest = api.DomainCreateRequest
	DomainStatus        = api.DomainStatus
	DomainTLS           = api.DomainTLS
	DomainUpdateRequest = api.DomainUpdateRequest
	DNSRecord           = api.DNSRecord
	RecordPurpose       = api.RecordPurpose
	RecordStatus        = api.RecordStatus

	// Suppressions.
	Suppression        = api.Suppression
	SuppressionReason  = api.SuppressionReason
	SuppressionRequest = api.SuppressionRequest
	Unsubscribed       = api.Unsubscribed

	// API keys.
	APIKey              = api.APIKey
	APIKeyCreateRequest = api.APIKeyCreateRequest
	APIKeyCreated       = api.APIKeyCreated
	Scope               = api.Scope
	KeyStatus           = api.KeyStatus

	// Errors and the service routes.
	ErrorBody   = api.ErrorBody
	ErrorDetail = api.ErrorDetail
	Status      = api.Status
)

// The API's error codes (Error.Code), for IsCode.
const (
	CodeInvalidJSON          = api.CodeInvalidJSON
	CodeValidation           = api.CodeValidation
	CodeMissingAPIKey        = api.CodeMissingAPIKey
	CodeInvalidAPIKey        = api.CodeInvalidAPIKey
	CodeAPIKeyRevoked        = api.CodeAPIKeyRevoked
	CodeInsufficientScope    = api.CodeInsufficientScope
	CodeDomainNotVerified    = api.CodeDomainNotVerified
	CodeNotFound             = api.CodeNotFound
	CodeMethodNotAllowed     = api.CodeMethodNotAllowed
	CodeIdempotencyKeyReused = api.CodeIdempotencyKeyReused
	CodeAlreadyExists        = api.CodeAlreadyExists
	CodeInvalidState         = api.CodeInvalidState
	CodePayloadTooLarge      = api.CodePayloadTooLarge
	CodeUnsupportedMediaType = api.CodeUnsupportedMediaType
	CodeRateLimited          = api.CodeRateLimited
	CodeServiceUnavailable   = api.CodeServiceUnavailable
	CodeInternal             = api.CodeInternal
)

// MaxBatchMessages is the most messages one SendBatch takes.
const MaxBatchMessages = api.MaxBatchMessages

// The values of every enumeration the API writes or takes, under the
// names package api gives them, so that the one import of package client
// is enough to compare a status: m.Status == mailroom.MessageDelivered.
// TestOneImportIsEnough fails when package api has one that is not here.
const (
	// Scope: what an API key may do.
	ScopeSend      = api.ScopeSend
	ScopeDomains   = api.ScopeDomains
	ScopeTemplates = api.ScopeTemplates
	ScopeWebhooks  = api.ScopeWebhooks
	ScopeReceive   = api.ScopeReceive
	ScopeKeys      = api.ScopeKeys

	// KeyStatus: APIKey.Status.
	KeyActive  = api.KeyActive
	KeyRevoked = api.KeyRevoked

	// Category: SendRequest.Category, Message.Category.
	CategoryTransactional = api.CategoryTransactional
	CategoryMarketing     = api.CategoryMarketing

	// SendStatus: SendResult.Status, an accepted batch item's Status.
	SendQueued    = api.SendQueued
	SendScheduled = api.SendScheduled
	SendDuplicate = api.SendDuplicate

	// MessageStatus: Message.Status, MessageListOptions.Status.
	MessageScheduled          = api.MessageScheduled
	MessageCanceled           = api.MessageCanceled
	MessageQueued             = api.MessageQueued
	MessageDeferred           = api.MessageDeferred
	MessageDelivered          = api.MessageDelivered
	MessagePartiallyDelivered = api.MessagePartiallyDelivered
	MessageBounced            = api.MessageBounced
	MessageFailed             = api.MessageFailed
	MessageSuppressed         = api.MessageSuppressed

	// RecipientStatus: Recipient.Status.
	RecipientQueued     = api.RecipientQueued
	RecipientDeferred   = api.RecipientDeferred
	RecipientDelivered  = api.RecipientDelivered
	RecipientBounced    = api.RecipientBounced
	RecipientFailed     = api.RecipientFailed
	RecipientSuppressed = api.RecipientSuppressed
	RecipientComplained = api.RecipientComplained
	RecipientCanceled   = api.RecipientCanceled

	// DeferralReason: Recipient.LastDeferralReason, EmailEventData's.
	DeferralThrottled     = api.DeferralThrottled
	DeferralGreylisted    = api.DeferralGreylisted
	DeferralSiteSuspended = api.DeferralSiteSuspended
	DeferralTLSRequired   = api.DeferralTLSRequired
	DeferralConnection    = api.DeferralConnection
	DeferralDNS           = api.DeferralDNS
	DeferralTemporary     = api.DeferralTemporary

	// BounceType: EmailEventData.BounceType.
	BounceHard = api.BounceHard
	BounceSoft = api.BounceSoft

	// TLSPolicy: TLSInfo.Policy.
	TLSPolicyRequireTLS    = api.TLSPolicyRequireTLS
	TLSPolicyMTASTS        = api.TLSPolicyMTASTS
	TLSPolicyEnforced      = api.TLSPolicyEnforced
	TLSPolicyOpportunistic = api.TLSPolicyOpportunistic

	// EventType: Event.Type, EventRecord.Type, a webhook's events.
	EventEmailQueued            = api.EventEmailQueued
	EventEmailScheduled         = api.EventEmailScheduled
	EventEmailDelivered         = api.EventEmailDelivered
	EventEmailDeferred          = api.EventEmailDeferred
	EventEmailBounced           = api.EventEmailBounced
	EventEmailFailed            = api.EventEmailFailed
	EventEmailSuppressed        = api.EventEmailSuppressed
	EventEmailComplained        = api.EventEmailComplained
	EventEmailCanceled          = api.EventEmailCanceled
	EventDomainVerified         = api.EventDomainVerified
	EventDomainFailed           = api.EventDomainFailed
	EventDomainTemporaryFailure = api.EventDomainTemporaryFailure
	EventWebhookTest            = api.EventWebhookTest
	EventEmailReceived          = api.EventEmailReceived
	EventEmailOpened            = api.EventEmailOpened
	EventEmailClicked           = api.EventEmailClicked
	EventAll                    = api.EventAll

	// WebhookFormat: Webhook.Format, the payload an endpoint is sent.
	WebhookFormatMailroom = api.WebhookFormatMailroom
	WebhookFormatResend   = api.WebhookFormatResend

	// AttemptStatus: WebhookAttempt.Status.
	AttemptSucceeded = api.AttemptSucceeded
	AttemptFailed    = api.AttemptFailed

	// DomainStatus: Domain.Status, DomainEventData.Status.
	DomainPending          = api.DomainPending
	DomainVerified         = api.DomainVerified
	DomainTemporaryFailure = api.DomainTemporaryFailure
	DomainFailed           = api.DomainFailed

	// DomainTLS: Domain.TLS, DomainUpdateRequest.TLS.
	DomainTLSOpportunistic = api.DomainTLSOpportunistic
	DomainTLSEnforced      = api.DomainTLSEnforced

	// RecordPurpose and RecordStatus: a DNSRecord's.
	PurposeDKIM       = api.PurposeDKIM
	PurposeSPF        = api.PurposeSPF
	PurposeReturnPath = api.PurposeReturnPath
	PurposeDMARC      = api.PurposeDMARC
	PurposeReceiving  = api.PurposeReceiving
	RecordPending     = api.RecordPending
	RecordVerified    = api.RecordVerified
	RecordFailed      = api.RecordFailed

	// SuppressionReason: Suppression.Reason.
	SuppressedHardBounce  = api.SuppressedHardBounce
	SuppressedComplaint   = api.SuppressedComplaint
	SuppressedManual      = api.SuppressedManual
	SuppressedUnsubscribe = api.SuppressedUnsubscribe

	// AuthResult: ReceivedAuthentication's verdicts (RFC 8601 result words).
	AuthPass      = api.AuthPass
	AuthFail      = api.AuthFail
	AuthSoftFail  = api.AuthSoftFail
	AuthNeutral   = api.AuthNeutral
	AuthNone      = api.AuthNone
	AuthTempError = api.AuthTempError
	AuthPermError = api.AuthPermError

	// StatusOK is Status.Status of Health and Ready when all is well.
	StatusOK = api.StatusOK
)

// Every value of an enumeration, in the order of the API reference: to
// check a value taken from a user or a flag.

// Scopes returns every scope.
func Scopes() []Scope { return api.Scopes() }

// MessageStatuses returns every message status.
func MessageStatuses() []MessageStatus { return api.MessageStatuses() }

// RecipientStatuses returns every recipient status.
func RecipientStatuses() []RecipientStatus { return api.RecipientStatuses() }

// AuthResults returns every verdict of a received message's checks.
func AuthResults() []AuthResult { return api.AuthResults() }

// DeferralReasons returns every deferral reason.
func DeferralReasons() []DeferralReason { return api.DeferralReasons() }

// EventTypes returns every event type (EventAll is no event's type and is
// not among them).
func EventTypes() []EventType { return api.EventTypes() }
