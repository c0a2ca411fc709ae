package submission

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/mailroom/mailroom/smtpserver"
)

// Outcomes the Server reports through Observe, each once per event. Per
// connection: OutcomeConnRefused, and for a session the server ended,
// OutcomeClosedJunk, OutcomeClosedErrors, OutcomeClosedSessionTimeout.
// Per AUTH: OutcomeAuthOK, OutcomeAuthFailed, OutcomeAuthUnavailable,
// OutcomeAuthLimited, OutcomeAuthNoTLS. Per MAIL: OutcomeAuthRequired, OutcomeKeyRejected,
// OutcomeRateLimited, OutcomeMemoryRefused. Per message: OutcomeQueued, OutcomeRejected,
// OutcomeRateLimited, OutcomeMemoryRefused, OutcomeTooLarge, OutcomeUnavailable, OutcomeFailed,
// OutcomeAborted.
const (
	// OutcomeConnRefused: a connection beyond MaxConnsPerIP or MaxConns.
	OutcomeConnRefused = smtpserver.OutcomeConnRefused
	// OutcomeClosedJunk, OutcomeClosedErrors, OutcomeClosedSessionTimeout:
	// a session past MaxJunkCommands, MaxErrors or SessionTimeout,
	// answered 421 4.7.0 and closed.
	OutcomeClosedJunk           = smtpserver.OutcomeClosedJunk
	OutcomeClosedErrors         = smtpserver.OutcomeClosedErrors
	OutcomeClosedSessionTimeout = smtpserver.OutcomeClosedSessionTimeout
	// OutcomeAuthOK: a login with a valid key of scope send (235).
	OutcomeAuthOK = "auth_ok"
	// OutcomeAuthFailed: a wrong, malformed or revoked key, or one without
	// scope send (535 5.7.8).
	OutcomeAuthFailed = "auth_failed"
	// OutcomeAuthUnavailable: the key could not be checked (454 4.7.0).
	OutcomeAuthUnavailable = "auth_unavailable"
	// OutcomeAuthLimited: AUTH from an address over its budget of
	// failures, answered after a delay; its credentials are still checked
	// and counted as well (auth_ok or auth_failed).
	OutcomeAuthLimited = "auth_limited"
	// OutcomeAuthNoTLS: AUTH before TLS (538 5.7.11).
	OutcomeAuthNoTLS = "auth_no_tls"
	// OutcomeAuthRequired: MAIL before AUTH (530 5.7.0).
	OutcomeAuthRequired = "auth_required"
	// OutcomeKeyRejected: the key logged in with no longer passes at MAIL
	// (revoked, or its scope changed): 535 5.7.8.
	OutcomeKeyRejected = "key_rejected"
	// OutcomeRateLimited: the account's rate limit, at MAIL or from
	// Submit (451 4.7.0).
	OutcomeRateLimited = "rate_limited"
	// OutcomeMemoryRefused: the memory budget for requests in flight
	// had no room for the message, at MAIL for its declared SIZE or as it
	// arrived (452 4.3.1); the client submits again later.
	OutcomeMemoryRefused = "memory_refused"
	// OutcomeQueued: a message made durable (250 queued as msg_…).
	OutcomeQueued = "queued"
	// OutcomeRejected: a message refused for good (550 5.7.1): sender or
	// From not on a verified domain, invalid, Idempotency-Key reused.
	OutcomeRejected = "rejected"
	// OutcomeTooLarge: a message beyond MaxBytes (552 5.3.4).
	OutcomeTooLarge = "too_large"
	// OutcomeUnavailable: storage unavailable or the Handler timed out
	// (451 4.3.0); the client submits again later.
	OutcomeUnavailable = "unavailable"
	// OutcomeFailed: Submit failed unexpectedly (451 4.3.0, logged as an
	// error).
	OutcomeFailed = "failed"
	// OutcomeAborted: a message cut off (timeout, disconnection, a line
	// beyond the line limit).
	OutcomeAborted = "aborted"
)

// Outcomes lists every outcome, so that each counter exists at 0 from the
// start.
var Outcomes = []string{
	OutcomeConnRefused, OutcomeClosedJunk, OutcomeClosedErrors, OutcomeClosedSessionTimeout,
	OutcomeAuthOK, OutcomeAuthFailed, OutcomeAuthUnavailable, OutcomeAuthLimited, OutcomeAuthNoTLS,
	OutcomeAuthRequired, OutcomeKeyRejected, OutcomeRateLimited, OutcomeMemoryRefused,
	OutcomeQueued, OutcomeRejected, OutcomeTooLarge, OutcomeUnavailable, OutcomeFailed, OutcomeAborted,
}

// Metrics registers the submission server's counter on reg and returns the
// hook to set as Server.Observe. An operator sees from it that messages
// arrive and are queued, that storage turned them away (unavailable), or
// that someone guesses keys (auth_failed, auth_limited).
func Metrics(reg prometheus.Registerer) func(outcome string) {
	return smtpserver.Metrics(reg, "mailroom_submission_smtp_total",
		"What SMTP submission did with connections, logins, transactions and messages, by outcome "+
			"(conn_refused, closed_junk, closed_errors, closed_session_timeout, "+
			"auth_ok, auth_failed, auth_unavailable, auth_limited, auth_no_tls, auth_required, "+
			"key_rejected, rate_limited, memory_refused, queued, rejected, too_large, unavailable, failed, aborted).",
		Outcomes)
}
