package client

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/mailroom/mailroom/client/api"
)

// Error is an answer of the service that is not a 2xx: its status and the
// error body (docs/api.md "Errors").
//
// The fields hold the server's text as it was received, control
// characters included: clean them before writing them to a terminal.
// Error() does: its text has them replaced.
type Error struct {
	// Status is the HTTP status, such as 404; 0 for a refused item of a
	// batch (BatchItemResult.Err), which has no answer of its own.
	Status int
	// Code is the API's error code, such as "not_found" (the Code
	// constants): the stable part. "" when the answer was not the API's
	// error body (a proxy's page, say).
	Code string
	// Message is written for people and may change.
	Message string
	// Details names each problem of a validation error.
	Details []api.ErrorDetail
	// RequestID is the answer's X-Request-Id: quote it when reporting a
	// problem.
	RequestID string
	// RetryAfter is the answer's Retry-After (429 and 503), 0 when absent:
	// the service's wait as it sent it, not cut short (a number too large
	// for a Duration is the longest one, about 292 years). A wait longer
	// than the backoff's cap, or past the context's deadline, is not
	// begun: the call returns this error at once, for the caller to decide.
	RetryAfter time.Duration
}

// Error writes the status, the code, the message and the first few
// details, with the request id. Its control characters (every one from
// the server's text) are spaces: an error ends up in logs and on
// terminals, where a broken or hostile server's escape sequences or line
// breaks would otherwise drive the terminal or forge log lines.
func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString("mailroom:")
	if e.Status != 0 {
		fmt.Fprintf(&b, " %d", e.Status)
	}
	if e.Code != "" {
		b.WriteString(" " + e.Code)
	}
	if e.Message != "" {
		if e.Status != 0 || e.Code != "" {
			b.WriteString(":")
		}
		b.WriteString(" " + e.Message)
	}
	for i, d := range e.Details {
		if i == 3 {
			fmt.Fprintf(&b, " (and %d more)", len(e.Details)-i)
			break
		}
		sep := "; "
		if i == 0 {
			sep = " — "
		}
		b.WriteString(sep + d.Field)
		if d.Index != nil {
			fmt.Fprintf(&b, "[%d]", *d.Index)
		}
		b.WriteString(": " + d.Message)
	}
	if e.RequestID != "" {
		b.WriteString(" (request " + e.RequestID + ")")
	}
	return strings.Map(noControl, b.String())
}

// noControl is strings.Map's function that makes a control character a
// space.
func noControl(r rune) rune {
	if unicode.IsControl(r) {
		return ' '
	}
	return r
}

// Retryable reports whether the same request may succeed later: a 429 or
// a 503. Every other 4xx fails the same way when retried unchanged.
func (e *Error) Retryable() bool {
	return e.Status == http.StatusTooManyRequests || e.Status == http.StatusServiceUnavailable
}

// IsCode reports whether err is (or wraps) an *Error with the API error
// code code, such as CodeNotFound.
func IsCode(err error, code string) bool {
	var e *Error
	return errors.As(err, &e) && e.Code == code
}

// maxMessageBytes bounds the message taken from an answer that is not the
// API's error body.
const maxMessageBytes = 512

// newError reads a non-2xx answer.
func newError(status int, header http.Header, body []byte, now time.Time) *Error {
	e := &Error{
		Status:     status,
		RequestID:  header.Get("X-Request-Id"),
		RetryAfter: parseRetryAfter(header.Get("Retry-After"), now),
	}
	var eb api.ErrorBody
	if err := json.Unmarshal(body, &eb); err == nil && eb.Error != "" {
		e.Code, e.Message, e.Details = eb.Error, eb.Message, eb.Details
		return e
	}
	// Not the API's body: a proxy's page, a load balancer's 502.
	msg := strings.TrimSpace(string(body))
	if len(msg) > maxMessageBytes {
		msg = msg[:maxMessageBytes]
		for !utf8.ValidString(msg) {
			msg = msg[:len(msg)-1]
		}
		msg += "…"
	}
	if msg == "" || strings.ContainsRune(msg, '<') {
		msg = http.StatusText(status)
	}
	e.Message = msg
	return e
}
