package http

import (
	"errors"
	"log/slog"
	"net/http"
	"strconv"

	"github.com/mailroom/mailroom"
)

// statusOf maps each error code of API.md §2 to its HTTP status. It is the
// only place that does; handlers return errors and never pick statuses.
var statusOf = map[string]int{
	mailroom.ECodeInvalidJSON:          http.StatusBadRequest,
	mailroom.ECodeValidation:           http.StatusBadRequest,
	mailroom.ECodeMissingAPIKey:        http.StatusUnauthorized,
	mailroom.ECodeInvalidAPIKey:        http.StatusUnauthorized,
	mailroom.ECodeAPIKeyRevoked:        http.StatusUnauthorized,
	mailroom.ECodeInsufficientScope:    http.StatusForbidden,
	mailroom.ECodeDomainNotVerified:    http.StatusForbidden,
	mailroom.ECodeNotFound:             http.StatusNotFound,
	mailroom.ECodeMethodNotAllowed:     http.StatusMethodNotAllowed,
	mailroom.ECodeIdempotencyKeyReused: http.StatusConflict,
	mailroom.ECodeAlreadyExists:        http.StatusConflict,
	mailroom.ECodeInvalidState:         http.StatusConflict,
	mailroom.ECodePayloadTooLarge:      http.StatusRequestEntityTooLarge,
	mailroom.ECodeUnsupportedMediaType: http.StatusUnsupportedMediaType,
	mailroom.ECodeRateLimited:          http.StatusTooManyRequests,
	mailroom.ECodeUnavailable:          http.StatusServiceUnavailable,
	mailroom.ECodeInternal:             http.StatusInternalServerError,
}

// errorBody is the error response of API.md §2.
type errorBody struct {
	Error   string                `json:"error"`
	Message string                `json:"message"`
	Details []mailroom.FieldError `json:"details,omitempty"`
}

// writeError answers err. A *mailroom.Error is shown as it is (its Message
// is written for clients); any other error is a bug: it is logged with the
// request id and the client gets a 500 that reveals nothing but that id.
func writeError(w http.ResponseWriter, r *http.Request, err error) {
	info := requestInfoFrom(r.Context())
	var e *mailroom.Error
	if !errors.As(err, &e) {
		e = &mailroom.Error{Code: mailroom.ECodeInternal, Cause: err}
	}
	status, ok := statusOf[e.Code]
	if !ok {
		status, e = http.StatusInternalServerError, &mailroom.Error{Code: mailroom.ECodeInternal, Cause: err}
	}
	body := errorBody{Error: e.Code, Message: e.Message, Details: e.Details}
	switch {
	case status == http.StatusInternalServerError:
		body.Message = "An internal error occurred. Quote request id " + info.requestID + " when reporting it."
		slog.Default().Error("internal error", "request_id", info.requestID, "err", err)
	case e.Cause != nil:
		slog.Default().Warn("request failed", "request_id", info.requestID, "code", e.Code, "err", e.Cause)
	}
	if status == http.StatusUnauthorized {
		// RFC 6750 §3: tell the client which scheme is expected.
		w.Header().Set("WWW-Authenticate", `Bearer realm="mailroom"`)
	}
	if e.RetryAfter > 0 {
		w.Header().Set("Retry-After", strconv.Itoa(max(1, int(e.RetryAfter.Seconds()+0.999))))
	}
	if status == http.StatusRequestEntityTooLarge {
		// The rest of the body is not read: end the connection after this
		// answer instead of draining up to 16 MiB more.
		w.Header().Set("Connection", "close")
	}
	info.errorCode = e.Code
	writeJSON(w, status, body)
}
