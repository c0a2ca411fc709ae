package api

// Error codes: the "error" member of every error body (docs/api.md
// "Errors"). The code is the stable, machine-readable part of an error; the
// message is written for people and may change.
const (
	CodeInvalidJSON          = "invalid_json"           // 400: the body is not valid JSON, or a field has the wrong JSON type
	CodeValidation           = "validation_error"       // 400: a field or query parameter breaks a rule; details names each
	CodeMissingAPIKey        = "missing_api_key"        // 401: no bearer token
	CodeInvalidAPIKey        = "invalid_api_key"        // 401: malformed key, unknown key id or wrong secret
	CodeAPIKeyRevoked        = "api_key_revoked"        // 401: the key was revoked
	CodeInsufficientScope    = "insufficient_scope"     // 403: the key lacks the route's scope
	CodeDomainNotVerified    = "domain_not_verified"    // 403: the from domain is not a verified domain of the account
	CodeNotFound             = "not_found"              // 404: no such route, or no such resource in this account
	CodeMethodNotAllowed     = "method_not_allowed"     // 405: the route exists, the method does not
	CodeIdempotencyKeyReused = "idempotency_key_reused" // 409: the idempotency key was used before with a different request
	CodeAlreadyExists        = "already_exists"         // 409: a domain or template name the account already has
	CodeInvalidState         = "invalid_state"          // 409: the resource cannot do that now
	CodePayloadTooLarge      = "payload_too_large"      // 413: body over 16 MiB
	CodeUnsupportedMediaType = "unsupported_media_type" // 415: a body that is not application/json in UTF-8
	CodeRateLimited          = "rate_limited"           // 429: over the account's request rate; retry after Retry-After
	CodeServiceUnavailable   = "service_unavailable"    // 503: storage unreachable, overloaded or shutting down; retry after Retry-After
	CodeInternal             = "internal_error"         // 500: a bug; the message quotes the request id
)

// ErrorBody is the body of every error answer, whatever the route
// (OpenAPI schema Error), and of a batch item that failed (BatchItemError).
type ErrorBody struct {
	// Error is the code, one of the Code constants.
	Error string `json:"error"`
	// Message is written for people; it may change.
	Message string `json:"message"`
	// Details names each problem of a validation error: at most 100
	// entries, the last of which then says how many more were found. Left
	// out when there are none.
	Details []ErrorDetail `json:"details,omitempty"`
}

// ErrorDetail is one problem of a validation error. Field is stable and
// names the field as a path (attachments[0].filename, variables.customer.name);
// Index is set when the problem is one item of a list (a recipient of to,
// an attachment).
type ErrorDetail struct {
	Field   string `json:"field"`
	Message string `json:"message"`
	Index   *int   `json:"index,omitempty"`
}
