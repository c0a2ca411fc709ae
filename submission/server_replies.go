package submission

import (
	"errors"
	"strings"

	gosmtp "github.com/emersion/go-smtp"

	"github.com/mailroom/mailroom"
	"github.com/mailroom/mailroom/smtpserver"
)

// Replies of the transaction (docs/api.md "SMTP submission"). go-smtp
// writes an *SMTPError's code and text as they are; any other error would
// reach the client as Go text.
var (
	// RFC 4954 §6: 530 5.7.0, MAIL before AUTH.
	errAuthRequired = smtpserver.Reply(530, gosmtp.EnhancedCode{5, 7, 0}, "Authentication required")
	errNoMail       = smtpserver.Reply(503, gosmtp.EnhancedCode{5, 5, 1}, "Bad sequence of commands: send MAIL first")
	// The account's rate limit: 451 4.7.0, retryable.
	errRateLimited = smtpserver.Reply(451, gosmtp.EnhancedCode{4, 7, 0}, "rate limited, try again later")
	// 4.3.0: a temporary failure of the receiving system (RFC 3463 §3.5).
	// Storage that does not answer is 421 (docs/api.md "SMTP submission":
	// the service is not available; the client retries later, as it would
	// after a 451), a fault of ours 451.
	errMailTemporary      = smtpserver.ServiceFailure(421, gosmtp.EnhancedCode{4, 3, 0}, "Storage unavailable checking the key, try again later")
	errStorageUnavailable = smtpserver.ServiceFailure(421, gosmtp.EnhancedCode{4, 3, 0}, "Storage unavailable, the message was not queued; try again later")
	errSubmitTemporary    = smtpserver.ServiceFailure(451, gosmtp.EnhancedCode{4, 3, 0}, "Temporary failure queueing the message, try again later")
)

// queued is the reply to a message made durable. go-smtp writes whatever
// *SMTPError Data returns, a 250 too, and has no other way to name the id.
func queued(id string) *gosmtp.SMTPError {
	return smtpserver.Reply(250, gosmtp.EnhancedCode{2, 0, 0}, "queued as "+replyText(id))
}

// submitReply maps Submit's error to the reply and the outcome: the one
// place where the contract's error codes become SMTP replies.
//
//   - validation_error, domain_not_verified: 550 5.7.1 (RFC 3463 §3.8,
//     delivery not authorized, message refused) with the error's message,
//     which names the field or domain at fault;
//   - idempotency_key_reused: 550 5.7.1 too: the Idempotency-Key header
//     names another message, a refusal of this message for good, which no
//     retry of it mends, with the message saying so;
//   - rate_limited: 451 4.7.0, retryable;
//   - payload_too_large: 552 5.3.4;
//   - invalid_api_key, api_key_revoked, insufficient_scope (should Submit
//     check the key again): 535 5.7.8;
//   - service_unavailable, a timeout or cancellation: 421 4.3.0, never a
//     250 (docs/api.md's table);
//   - anything else (internal): 451 4.3.0, logged as an error.
func submitReply(err error) (*gosmtp.SMTPError, string) {
	var e *mailroom.Error
	errors.As(err, &e)
	switch mailroom.ErrorCode(err) {
	case mailroom.ECodeValidation, mailroom.ECodeDomainNotVerified, mailroom.ECodeIdempotencyKeyReused:
		return smtpserver.Reply(550, gosmtp.EnhancedCode{5, 7, 1}, errorText(e)), OutcomeRejected
	case mailroom.ECodeRateLimited:
		return errRateLimited, OutcomeRateLimited
	case mailroom.ECodePayloadTooLarge:
		return smtpserver.Reply(552, gosmtp.EnhancedCode{5, 3, 4}, errorText(e)), OutcomeTooLarge
	case mailroom.ECodeInvalidAPIKey, mailroom.ECodeAPIKeyRevoked, mailroom.ECodeInsufficientScope:
		return errCredentialsInvalid, OutcomeKeyRejected
	case mailroom.ECodeUnavailable:
		return errStorageUnavailable, OutcomeUnavailable
	}
	if smtpserver.Temporary(err) {
		return errStorageUnavailable, OutcomeUnavailable
	}
	return errSubmitTemporary, OutcomeFailed
}

// maxReplyText keeps a reply line within RFC 5321 §4.5.3.1.5's 512 octets,
// with room for the codes.
const maxReplyText = 400

// errorText is the text of a refusal: the error's message, written for
// people and safe to show, and its field details.
func errorText(e *mailroom.Error) string {
	if e == nil {
		return "Message refused"
	}
	var b strings.Builder
	b.WriteString(e.Message)
	for i, d := range e.Details {
		if i == 0 {
			b.WriteString(" (")
		} else {
			b.WriteString("; ")
		}
		if d.Field != "" {
			b.WriteString(d.Field + ": ")
		}
		b.WriteString(d.Message)
		if i == len(e.Details)-1 {
			b.WriteString(")")
		}
	}
	return replyText(b.String())
}

// replyText makes s fit one reply line: printable ASCII (a CR or LF would
// end the reply, or start a forged one), at most maxReplyText octets.
func replyText(s string) string {
	var b strings.Builder
	for _, r := range s {
		switch {
		case r == '\t' || r == '\r' || r == '\n':
			b.WriteByte(' ')
		case r < 0x20 || r == 0x7f:
		case r >= 0x80:
			b.WriteByte('?')
		default:
			b.WriteRune(r)
		}
		if b.Len() > maxReplyText {
			return b.String()[:maxReplyText-3] + "..."
		}
	}
	return strings.TrimSpace(b.String())
}
