package resend

import (
	"net/http"
	"regexp"
	"strings"

	"github.com/mailroom/mailroom"
)

// ErrorBody is the body of every error on Resend's routes: Resend's SDKs
// read name and message, and the Node SDK passes the whole body through
// as its error object.
type ErrorBody struct {
	StatusCode int    `json:"statusCode"`
	Name       string `json:"name"`
	Message    string `json:"message"`
}

// Resend's error names (https://resend.com/docs/api-reference/errors).
const (
	NameMissingAPIKey        = "missing_api_key"
	NameInvalidAPIKey        = "invalid_api_key"
	NameRestrictedAPIKey     = "restricted_api_key"
	NameValidation           = "validation_error"
	NameMissingRequiredField = "missing_required_field"
	NameInvalidParameter     = "invalid_parameter"
	NameInvalidAttachment    = "invalid_attachment"
	NameNotFound             = "not_found"
	NameMethodNotAllowed     = "method_not_allowed"
	NameInvalidIdempotency   = "invalid_idempotency_key"
	NameIdempotentConflict   = "invalid_idempotent_request"
	NameConcurrentIdempotent = "concurrent_idempotent_requests"
	NameRateLimitExceeded    = "rate_limit_exceeded"
	NameApplicationError     = "application_error"
	NameServiceUnavailable   = "service_unavailable"
)

// Error is e as Resend answers it: its status and name, from the same
// error codes /v1 answers with (docs/api.md "Errors"). message is the text
// to show (the caller has bounded it, and replaced an internal error's
// with one that reveals nothing).
//
// The Go SDK shows only the message, so the message must say on its own
// what was wrong: Mailroom's messages do, and a validation error's first
// detail is added to it by the caller.
func Error(e *mailroom.Error, message string) (int, ErrorBody) {
	status, name := statusAndName(e)
	if e.Code == mailroom.ECodeAPIKeyRevoked {
		// Resend answers a revoked key as an unknown one, in name and in
		// words: a key's holder learns nothing of whether it ever was one.
		message = "The API key is not valid."
	}
	return status, ErrorBody{StatusCode: status, Name: name, Message: message}
}

func statusAndName(e *mailroom.Error) (int, string) {
	switch e.Code {
	case mailroom.ECodeMissingAPIKey:
		return http.StatusUnauthorized, NameMissingAPIKey
	case mailroom.ECodeInvalidAPIKey, mailroom.ECodeAPIKeyRevoked:
		// Resend answers an unknown key, a wrong secret and a revoked key
		// alike.
		return http.StatusForbidden, NameInvalidAPIKey
	case mailroom.ECodeInsufficientScope:
		return http.StatusUnauthorized, NameRestrictedAPIKey
	case mailroom.ECodeDomainNotVerified:
		return http.StatusForbidden, NameValidation
	case mailroom.ECodeInvalidJSON:
		return http.StatusBadRequest, NameValidation
	case mailroom.ECodeValidation:
		return validationStatusAndName(e)
	case mailroom.ECodeNotFound:
		return http.StatusNotFound, NameNotFound
	case mailroom.ECodeMethodNotAllowed:
		return http.StatusMethodNotAllowed, NameMethodNotAllowed
	case mailroom.ECodeIdempotencyKeyReused:
		return http.StatusConflict, NameIdempotentConflict
	case mailroom.ECodeAlreadyExists, mailroom.ECodeInvalidState:
		return http.StatusConflict, NameValidation
	case mailroom.ECodePayloadTooLarge:
		return http.StatusRequestEntityTooLarge, NameValidation
	case mailroom.ECodeUnsupportedMediaType:
		return http.StatusUnsupportedMediaType, NameValidation
	case mailroom.ECodeRateLimited:
		return http.StatusTooManyRequests, NameRateLimitExceeded
	case mailroom.ECodeUnavailable:
		return http.StatusServiceUnavailable, NameServiceUnavailable
	}
	return http.StatusInternalServerError, NameApplicationError
}

// validationStatusAndName names a validation error as Resend would by
// its first problem: an idempotency key is 400 invalid_idempotency_key,
// a missing field 422 missing_required_field, an attachment 422
// invalid_attachment, anything else 422 validation_error.
func validationStatusAndName(e *mailroom.Error) (int, string) {
	if len(e.Details) == 0 {
		return http.StatusUnprocessableEntity, NameValidation
	}
	d := e.Details[0]
	switch {
	case d.Field == "idempotencyKey" || d.Field == "Idempotency-Key":
		return http.StatusBadRequest, NameInvalidIdempotency
	case strings.HasPrefix(d.Message, "is required"):
		return http.StatusUnprocessableEntity, NameMissingRequiredField
	case d.Field == "attachments" || strings.HasPrefix(d.Field, "attachments"):
		return http.StatusUnprocessableEntity, NameInvalidAttachment
	}
	return http.StatusUnprocessableEntity, NameValidation
}

// camelFields are the fields of Mailroom's send request whose names
// differ on Resend's routes, as a message may name them in its text.
var camelFields = regexp.MustCompile(`\b(replyTo|scheduledAt|contentType|contentId|idempotencyKey|requireTls)\b`)

// Text is a message of Mailroom's with the fields it names in its text
// named as Resend names them ("leave scheduledAt out" is "leave
// scheduled_at out"). Only those names are changed, never the rest of
// the text, which may quote what the client sent.
func Text(message string) string {
	return camelFields.ReplaceAllStringFunc(message, FieldName)
}

// FieldName is a field of Mailroom's vocabulary (camelCase, as /v1 names
// it in an error's details) as Resend's routes name it: snake_case
// (replyTo is reply_to, scheduledAt is scheduled_at). A header's name
// (Idempotency-Key) is kept.
func FieldName(field string) string {
	if strings.Contains(field, "-") {
		return field
	}
	var b strings.Builder
	for i, r := range field {
		if r >= 'A' && r <= 'Z' {
			if i > 0 {
				b.WriteByte('_')
			}
			r += 'a' - 'A'
		}
		b.WriteRune(r)
	}
	return b.String()
}
