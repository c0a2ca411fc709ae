package client

import (
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strings"
)

// ErrOutcomeUnknown is in the error of a send (Send, SendBatch) that may
// have been accepted: errors.Is(err, ErrOutcomeUnknown). The error is an
// *OutcomeUnknownError, which names the idempotency keys to send again
// with.
var ErrOutcomeUnknown = errors.New("the outcome is unknown: the service may have accepted the request")

// OutcomeUnknownError is the error of a send (Send, SendBatch) that may
// have been accepted although no attempt was answered with success: an
// attempt failed after the request may have reached the service (the
// connection broke, or the attempt or the context ran out, while the
// answer was awaited), or was answered 500, 502 or 504 (the service
// failed, or a proxy in front lost it, perhaps after it acted). A 4xx, a
// 503 (refused before acting) or a connection never made is an answer
// that nothing was stored, and is returned as it is.
//
// Send again with the same idempotency keys, never new ones: a message
// already accepted answers SendDuplicate with its id, and nothing is sent
// twice. Keys holds them: Keyed sets them on a copy of the messages.
//
// It wraps ErrOutcomeUnknown and the last attempt's error (an *Error for a
// 5xx, for errors.As and IsCode).
type OutcomeUnknownError struct {
	// Keys are the idempotency keys the request went under, in the order
	// of its messages: Send's one key (the request's own, or the one Send
	// made), or each of SendBatch's messages' (its own, or the one
	// SendBatch made for it).
	Keys []string
	// Err is the last attempt's error.
	Err error
}

// maxKeysNamed is how many keys Error() writes: a batch has up to 500.
const maxKeysNamed = 5

// Error says that the outcome is unknown and names the keys to send again
// with (the first few of a batch's).
func (e *OutcomeUnknownError) Error() string {
	var b strings.Builder
	b.WriteString("mailroom: " + ErrOutcomeUnknown.Error())
	switch len(e.Keys) {
	case 0:
		b.WriteString("; send again with the same idempotency keys")
	case 1:
		fmt.Fprintf(&b, "; send again with the idempotency key %q", e.Keys[0])
	default:
		b.WriteString("; send again with the same idempotency keys, in order:")
		for i, k := range e.Keys {
			if i == maxKeysNamed {
				fmt.Fprintf(&b, " … and %d more (OutcomeUnknownError.Keys)", len(e.Keys)-i)
				break
			}
			fmt.Fprintf(&b, " %q", k)
		}
	}
	return b.String() + ": " + e.Err.Error()
}

// Unwrap returns ErrOutcomeUnknown and the last attempt's error.
func (e *OutcomeUnknownError) Unwrap() []error { return []error{ErrOutcomeUnknown, e.Err} }

// Keyed returns a copy of messages, the messages of the SendBatch that
// failed so, with message i under Keys[i]: SendBatch(ctx, e.Keyed(msgs))
// sends again safely. For a Send, give Keys[0] as the request's
// IdempotencyKey. It panics when the lengths differ (not that batch's
// messages).
func (e *OutcomeUnknownError) Keyed(messages []SendRequest) []SendRequest {
	if len(messages) != len(e.Keys) {
		panic(fmt.Sprintf("mailroom: OutcomeUnknownError.Keyed: %d messages for %d keys", len(messages), len(e.Keys)))
	}
	out := make([]SendRequest, len(messages))
	for i := range messages {
		out[i] = messages[i]
		out[i].IdempotencyKey = e.Keys[i]
	}
	return out
}

// outcome returns the error of a call that failed, err: an
// *OutcomeUnknownError when the call is a send under idempotency keys and
// one of its attempts may have been acted on.
func (cl *call) outcome(err error, mayHaveActed bool) error {
	if cl.keys == nil || !mayHaveActed {
		return err
	}
	return &OutcomeUnknownError{Keys: cl.keys, Err: err}
}

// mayHaveArrived says whether an attempt that failed with err, no answer
// read, may have reached the service: every failure but a connection
// never made and a TLS handshake that failed (the request is sent after
// it).
func mayHaveArrived(err error) bool {
	if permanentNetError(err) {
		return false
	}
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err
	}
	var op *net.OpError
	return !(errors.As(err, &op) && op.Op == "dial")
}

// mayHaveActed says whether an answer of status may have come after the
// service acted: a 5xx other than 503, which the service answers before
// acting (a proxy's 502 or 504 may come after).
func mayHaveActed(status int) bool {
	return status >= 500 && status != http.StatusServiceUnavailable
}
