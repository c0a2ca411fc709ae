package mailroom

import (
	"errors"
	"fmt"
	"time"
)

// Error codes of the API contract (docs/api.md "Errors"). The code is the stable,
// machine-readable part of an error; http maps each code to its status in
// one place.
const (
	ECodeInvalidJSON          = "invalid_json"
	ECodeValidation           = "validation_error"
	ECodeMissingAPIKey        = "missing_api_key"
	ECodeInvalidAPIKey        = "invalid_api_key"
	ECodeAPIKeyRevoked        = "api_key_revoked"
	ECodeInsufficientScope    = "insufficient_scope"
	ECodeDomainNotVerified    = "domain_not_verified"
	ECodeNotFound             = "not_found"
	ECodeMethodNotAllowed     = "method_not_allowed"
	ECodeIdempotencyKeyReused = "idempotency_key_reused"
	ECodeAlreadyExists        = "already_exists"
	ECodeInvalidState         = "invalid_state"
	ECodePayloadTooLarge      = "payload_too_large"
	ECodeUnsupportedMediaType = "unsupported_media_type"
	ECodeRateLimited          = "rate_limited"
	ECodeUnavailable          = "service_unavailable"
	ECodeInternal             = "internal_error"
)

// Error is the one error type of the domain. Its Message is written for
// people and is safe to show to API clients; anything internal (SQL, Go
// error text) stays in Cause, which is logged but never sent.
type Error struct {
	Code    string
	Message string
	// Details names each offending field of a validation error.
	Details []FieldError
	// RetryAfter tells the client when to try again (429 and 503).
	RetryAfter time.Duration
	// Cause is the underlying error, for logs only.
	Cause error
}

// FieldError is one entry of a validation error's details. Index is set when
// the field belongs to one item of a list (a batch item, a recipient).
type FieldError struct {
	Field   string `json:"field"`
	Message string `json:"message"`
	Index   *int   `json:"index,omitempty"`
}

func (e *Error) Error() string {
	if e.Cause != nil {
		return fmt.Sprintf("%s: %s: %v", e.Code, e.Message, e.Cause)
	}
	return e.Code + ": " + e.Message
}

func (e *Error) Unwrap() error { return e.Cause }

// Errorf returns an *Error with the given code and a formatted message.
func Errorf(code, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, excerptArgs(args)...)}
}

// Unavailable wraps an infrastructure failure (storage unreachable, busy) as
// a retryable 503 that reveals nothing of the cause to clients.
func Unavailable(cause error) *Error {
	return &Error{
		Code:       ECodeUnavailable,
		Message:    "The service is temporarily unavailable; retry with the same idempotency key.",
		RetryAfter: time.Second,
		Cause:      cause,
	}
}

// ErrorCode returns the code of err, or ECodeInternal for an error that is
// not an *Error: an unexpected error is a bug until proven otherwise.
func ErrorCode(err error) string {
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	return ECodeInternal
}

// IsCode reports whether err is an *Error with the given code.
func IsCode(err error, code string) bool {
	var e *Error
	return errors.As(err, &e) && e.Code == code
}
