package smtpserver

import (
	"context"
	"errors"
	"fmt"

	gosmtp "github.com/emersion/go-smtp"

	"github.com/mailroom/mailroom"
)

// Replies both listeners give. go-smtp writes an *SMTPError's code and
// text as they are; any other error would reach the client as Go text.
var (
	// RFC 5321 §4.1.1.2: MAIL inside a transaction; 503 bad sequence.
	ErrNestedMail = Reply(503, gosmtp.EnhancedCode{5, 5, 1}, "Nested MAIL command: send RSET first")
	// 4.3.2: system not accepting network messages (RFC 3463 §3.5).
	ErrShuttingDown = Reply(421, gosmtp.EnhancedCode{4, 3, 2}, "Service shutting down, try again later")
	// CutOff's replies.
	errCutOff      = Reply(421, gosmtp.EnhancedCode{4, 4, 2}, "Timeout or connection error while receiving the message, closing connection")
	errLineTooLong = Reply(500, gosmtp.EnhancedCode{5, 5, 2}, "Line too long, closing connection")
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
