package inbound

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/mailroom/mailroom/smtpserver"
)

// Outcomes the Server reports through Observe. Per connection:
// OutcomeConnRefused, and for a session the server ended,
// OutcomeClosedJunk, OutcomeClosedErrors, OutcomeClosedSessionTimeout. Per RCPT: OutcomeRcptRefused, OutcomeRcptError. Per
// message: OutcomeTooLarge, OutcomeAborted, OutcomeUnparsed, and, once for
// each of its recipients, one of OutcomeApplied, OutcomeUnavailable,
// OutcomeFailed. What the Handler drops (auto-replies, reports matching
// nothing, tokens that do not verify) it counts itself: to the server
// those are applied.
const (
	// OutcomeConnRefused: a connection beyond MaxConnsPerIP or MaxConns,
	// answered 421.
	OutcomeConnRefused = smtpserver.OutcomeConnRefused
	// OutcomeClosedJunk, OutcomeClosedErrors, OutcomeClosedSessionTimeout:
	// a session past MaxJunkCommands, MaxErrors or SessionTimeout,
	// answered 421 4.7.0 and closed.
	OutcomeClosedJunk           = smtpserver.OutcomeClosedJunk
	OutcomeClosedErrors         = smtpserver.OutcomeClosedErrors
	OutcomeClosedSessionTimeout = smtpserver.OutcomeClosedSessionTimeout
	// OutcomeRcptRefused: a recipient the Handler does not take, answered
	// 550 5.1.1.
	OutcomeRcptRefused = "rcpt_refused"
	// OutcomeRcptError: the Handler could not say, answered 451 4.3.0.
	OutcomeRcptError = "rcpt_error"
	// OutcomeTooLarge: a message beyond MaxBytes, answered 552.
	OutcomeTooLarge = "too_large"
	// OutcomeAborted: a message cut off (timeout, disconnection, a line
	// beyond the line limit): nothing is applied.
	OutcomeAborted = "aborted"
	// OutcomeUnparsed: a message Parse could not read at all, accepted
	// (250) and dropped: refusing it would make the sender bounce a
	// bounce.
	OutcomeUnparsed = "unparsed"
	// OutcomeApplied: the Handler applied the report for a recipient.
	OutcomeApplied = "applied"
	// OutcomeUnavailable: storage was unavailable; the message was
	// answered 451 and the sender delivers it again later.
	OutcomeUnavailable = "unavailable"
	// OutcomeFailed: the Handler failed otherwise; the message was
	// accepted and the report dropped.
	OutcomeFailed = "failed"
	// OutcomeReceived: a message for receiving domains was stored
	// (once, whatever its number of recipients there); when storage
	// could not take it the outcome is OutcomeUnavailable (451).
	OutcomeReceived = "received"
)

// Outcomes lists every outcome, so that each counter exists at 0 from the
// start.
var Outcomes = []string{
	OutcomeConnRefused, OutcomeClosedJunk, OutcomeClosedErrors, OutcomeClosedSessionTimeout,
	OutcomeRcptRefused, OutcomeRcptError,
	OutcomeTooLarge, OutcomeAborted, OutcomeUnparsed,
	OutcomeApplied, OutcomeUnavailable, OutcomeFailed, OutcomeReceived,
}

// Metrics registers the return-path MX's counter on reg and returns the
// hook to set as Server.Observe. An operator sees from it that reports
// arrive and are applied, that storage turned them away (unavailable), or
// that something hammers the MX (refused connections and recipients,
// sessions closed for junk or errors).
func Metrics(reg prometheus.Registerer) func(outcome string) {
	return smtpserver.Metrics(reg, "mailroom_inbound_smtp_total",
		"What the return-path MX did with connections, recipients and messages, by outcome "+
			"(conn_refused, closed_junk, closed_errors, closed_session_timeout, rcpt_refused, rcpt_error, too_large, aborted, unparsed, applied, unavailable, failed, received).",
		Outcomes)
}
