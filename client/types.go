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
	BatchSendResult  = api.BatchSendResult
	BatchItemResult  = api.BatchItemResult
	BatchSendRequest = api.BatchSendRequest

	// The email log.
	Message         = api.Message
	MessageStatus   = api.MessageStatus
	Recipient       = api.Recipient
	RecipientStatus = api.RecipientStatus
	MessageEvent    = api.MessageEvent
	TemplateRef     = api.TemplateRef

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
	DomainStatus        = api.DomainStatus
	DomainTLS           = api.DomainTLS
	DomainUpdateRequest = api.DomainUpdateRequest
	DNSRecord           = api.DNSRecord
	RecordPurpose       = api.RecordPurpose
	RecordStatus        = api.RecordStatus

	// Suppressions.
	Suppression       = api.Suppression
	SuppressionReason = api.SuppressionReason

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

// Values of the enumerations a request or a filter names. Package api has
// the rest (record and domain states, suppression reasons, …).
const (
	ScopeSend      = api.ScopeSend
	ScopeDomains   = api.ScopeDomains
	ScopeTemplates = api.ScopeTemplates
	ScopeWebhooks  = api.ScopeWebhooks
	ScopeKeys      = api.ScopeKeys

	CategoryTransactional = api.CategoryTransactional
	CategoryMarketing     = api.CategoryMarketing

	SendQueued    = api.SendQueued
	SendScheduled = api.SendScheduled
	SendDuplicate = api.SendDuplicate

	MessageScheduled          = api.MessageScheduled
	MessageCanceled           = api.MessageCanceled
	MessageQueued             = api.MessageQueued
	MessageDeferred           = api.MessageDeferred
	MessageDelivered          = api.MessageDelivered
	MessagePartiallyDelivered = api.MessagePartiallyDelivered
	MessageBounced            = api.MessageBounced
	MessageFailed             = api.MessageFailed
	MessageSuppressed         = api.MessageSuppressed

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
	EventAll                    = api.EventAll

	AttemptSucceeded = api.AttemptSucceeded
	AttemptFailed    = api.AttemptFailed
)
