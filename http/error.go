package http

import (
	"errors"
	"log/slog"
	"net/http"
	"strconv"

	"github.com/mailroom/mailroom"
	"github.com/mailroom/mailroom/client/api"
	"github.com/mailroom/mailroom/resend"
)

// statusOf maps each error code of docs/api.md "Errors" to its HTTP status. It is the
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

// toErrorBody is the body of an error a client is shown (docs/api.md
// "Errors"), its message and details bounded.
func toErrorBody(e *mailroom.Error) api.ErrorBody {
	return api.ErrorBody{Error: e.Code, Message: mailroom.Excerpt(e.Message, maxMessageBytes), Details: toErrorDetails(e.Details)}
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
	body := toErrorBody(e)
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
		// The rest of the body is not used: end an HTTP/1.x connection
		// after this answer, once the linger below is over.
		closeAfterAnswer(w, r)
		readAfterAnswer(w, r)
	}
	info.errorCode = e.Code
	if info.resend {
		var rb resend.ErrorBody
		status, rb = resend.Error(e, resendMessage(body))
		writeJSON(w, status, rb)
	} else {
		writeJSON(w, status, body)
	}
	switch {
	case status == http.StatusRequestEntityTooLarge:
		lingerAfterAnswer(w, r, lingerTooLarge)
	case status == http.StatusTooManyRequests && r.ProtoMajor == 2:
		// Over HTTP/1.1 the 429 closes the connection before a body is
		// sent to it (the client waits for 100-continue or is cut off).
		lingerAfterAnswer(w, r, lingerRateLimited)
	}
}

// An error body stays small whatever produced it: messages quote only
// excerpts of what the client sent (mailroom.Excerpt), and these bounds
// are the backstop for any message that did not.
const (
	maxMessageBytes = 1024
	maxDetailBytes  = 512
)

// toErrorDetails shows details with every field and message cut to the
// bounds; nil (left out) when there are none.
func toErrorDetails(details []mailroom.FieldError) []api.ErrorDetail {
	if len(details) == 0 {
		return nil
	}
	out := make([]api.ErrorDetail, len(details))
	for i, d := range details {
		out[i] = api.ErrorDetail{Field: mailroom.Excerpt(d.Field, mailroom.MaxFieldName), Message: mailroom.Excerpt(d.Message, maxDetailBytes), Index: d.Index}
	}
	return out
}
