package smtpserver

import (
	"context"
	"errors"
	"fmt"
	"sync"

	gosmtp "github.com/emersion/go-smtp"

	"github.com/mailroom/mailroom"
)

// Replies both listeners give. go-smtp writes an *SMTPError's code and
// text as they are; any other error would reach the client as Go text.
var (
	// RFC 5321 §4.1.1.2: MAIL inside a transaction; 503 bad sequence.
	ErrNestedMail = Reply(503, gosmtp.EnhancedCode{5, 5, 1}, "Nested MAIL command: send RSET first")
	// 4.3.2: system not accepting network messages (RFC 3463 §3.5).
	ErrShuttingDown = ServiceFailure(421, gosmtp.EnhancedCode{4, 3, 2}, "Service shutting down, try again later")
	// CutOff's replies.
	errCutOff      = Reply(421, gosmtp.EnhancedCode{4, 4, 2}, "Timeout or connection error while receiving the message, closing connection")
	errLineTooLong = Reply(500, gosmtp.EnhancedCode{5, 5, 2}, "Line too long, closing connection")
	errBareLF      = Reply(500, gosmtp.EnhancedCode{5, 5, 2}, "Bare LF next to a line \".\": end lines with CRLF and the message with CRLF.CRLF, closing connection")
)

// ErrTooLarge is RFC 1870 §6.1's reply to a message beyond the fixed
// maximum: 552, 5.3.4 (RFC 3463 §3.4, message too big for system).
func ErrTooLarge(max int64) *gosmtp.SMTPError {
	return Reply(552, gosmtp.EnhancedCode{5, 3, 4}, fmt.Sprintf("Message too large: the limit is %d bytes", max))
}

// Temporary says whether a handler's error is one the client should retry:
// storage unavailable, or a call cut by its timeout or by the server's
// closing.
func Temporary(err error) bool {
	return mailroom.IsCode(err, mailroom.ECodeUnavailable) ||
		errors.Is(err, context.DeadlineExceeded) ||
		errors.Is(err, context.Canceled)
}

// Reply is the reply code, enhanced status code (RFC 3463) and text of
// an *SMTPError, which go-smtp writes as they are.
func Reply(code int, enhanced gosmtp.EnhancedCode, text string) *gosmtp.SMTPError {
	return &gosmtp.SMTPError{Code: code, EnhancedCode: enhanced, Message: text}
}

// serviceFailures are the replies made by ServiceFailure.
var serviceFailures sync.Map // *gosmtp.SMTPError → struct{}

// ServiceFailure is Reply for a temporary failure of the service (storage
// unavailable, a timeout), which is no fault of the client's: it does not
// count against the session's MaxErrors. Make it once, in a package
// variable: it is recognised as the same *SMTPError.
func ServiceFailure(code int, enhanced gosmtp.EnhancedCode, text string) *gosmtp.SMTPError {
	e := Reply(code, enhanced, text)
	serviceFailures.Store(e, struct{}{})
	return e
}

// clientError says whether a session method's err counts against
// MaxErrors: a 4xx or 5xx reply that is not a ServiceFailure. Another
// error (a message cut off, a bug) is not a refusal of the client's
// command.
func clientError(err error) bool {
	var e *gosmtp.SMTPError
	if !errors.As(err, &e) || e.Code < 400 {
		return false
	}
	_, service := serviceFailures.Load(e)
	return !service
}
