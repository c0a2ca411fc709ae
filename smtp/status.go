package smtp

import (
	"fmt"

	"github.com/mailroom/mailroom"
)

// status is a verdict for one or more recipients: a server's reply, or what
// went wrong when no reply came.
type status struct {
	Outcome  mailroom.Outcome
	Code     int
	Enhanced string
	Response string
	// Text is the reply's text alone, for what a site is told.
	Text string
	// Reason is set when the deferral's reason is known here
	// (mailroom.DeferThrottled); empty, the reply classifies it.
	Reason mailroom.DeferralReason
}

// Enhanced status codes (RFC 3463 §3) for failures that happen here rather
// than at the receiver, so that the email log classifies them alike.
const (
	enhNoAnswer      = "4.4.1"  // no answer from host: connection refused or timed out
	enhBadConnection = "4.4.2"  // the connection broke mid-session
	enhDNS           = "4.4.3"  // directory server failure
	enhCongestion    = "4.4.5"  // no connection slot before the deadline
	enhSecurity      = "4.7.0"  // security: TLS or AUTH could not be set up
	enhNoDomain      = "5.1.2"  // bad destination system address
	enhNullMX        = "5.1.10" // recipient address has null MX (RFC 7505 §3)
	enhBadRecipient  = "5.1.3"  // bad destination mailbox address syntax
	enhBadSender     = "5.5.4"  // invalid command arguments: our own envelope
	enhTooBig        = "5.3.4"  // message too big for system
	enhNonASCII      = "5.6.7"  // non-ASCII addresses not permitted
)

// deferred is a temporary failure without a reply from the server: a
// network error, a timeout, a DNS failure. Code stays 0, as
// mailroom.RecipientResult documents.
func deferred(enhanced, format string, args ...any) status {
	return status{
		Outcome:  mailroom.Deferred,
		Enhanced: enhanced,
		Response: fmt.Sprintf(format, args...),
	}
}

// local is a verdict reached here with a reply code of our own, written as
// a receiver would have answered, so the log reads the same either way.
func local(code int, enhanced, format string, args ...any) status {
	return reply{Code: code, Enhanced: enhanced, Text: fmt.Sprintf(format, args...)}.status()
}

// asDeferred keeps the reply but makes the verdict temporary: a refusal
// before any transaction (a 5xx greeting, a rejected AUTH) is about this
// session, not about the recipients, and may be tried again.
func (s status) asDeferred() status {
	s.Outcome = mailroom.Deferred
	return s
}

// results gives every recipient the same verdict.
func results(recipients []string, mx string, st status) []mailroom.RecipientResult {
	out := make([]mailroom.RecipientResult, len(recipients))
	for i, rcpt := range recipients {
		out[i] = st.result(rcpt, mx)
	}
	return out
}

func (s status) result(rcpt, mx string) mailroom.RecipientResult {
	return mailroom.RecipientResult{
		Recipient: rcpt,
		Outcome:   s.Outcome,
		Code:      s.Code,
		Enhanced:  s.Enhanced,
		Response:  s.Response,
		MX:        mx,
		Reason:    s.Reason,
	}
}
