package mailroom

import "context"

// Mail coming back to the return-path MX (docs/api.md "Mail coming back"):
// what package inbound makes of one message, before its Reports service
// matches it to the log.

// ReportKind says what a message received at a bounce subdomain is.
type ReportKind string

const (
	// ReportDSN is a delivery status notification (RFC 3464), or a
	// plain-text bounce of an old MTA from which a recipient and a status
	// could be read.
	ReportDSN ReportKind = "dsn"
	// ReportComplaint is an abuse report of a feedback loop (RFC 5965 ARF,
	// Feedback-Type abuse or fraud).
	ReportComplaint ReportKind = "complaint"
	// ReportAutoReply is a vacation responder or other automatic reply
	// (RFC 3834 Auto-Submitted): never a bounce.
	ReportAutoReply ReportKind = "auto_reply"
	// ReportUnknown is anything else: dropped and counted.
	ReportUnknown ReportKind = "unknown"
)

// Report is a received message as far as the service understands it.
type Report struct {
	Kind ReportKind
	// Recipients are a DSN's per-recipient blocks (RFC 3464 §2.3).
	Recipients []ReportRecipient
	// FeedbackType is an ARF report's Feedback-Type (RFC 5965 §3.1),
	// lower-cased: "abuse", "fraud", …
	FeedbackType string
	// OriginalMessageID is the Message-ID of the message a report is
	// about (an ARF's third part, or a DSN's returned headers), without
	// angle brackets; "" when absent.
	OriginalMessageID string
	// OriginalRecipient is the recipient an ARF report names
	// (Original-Rcpt-To, or the original message's To when one address).
	OriginalRecipient string
	// Text is the human-readable part, cut to MaxReportText, kept as the
	// event's detail.
	Text string
}

// MaxReportText bounds the reporter's text a report keeps.
const MaxReportText = 2048

// ReportRecipient is one per-recipient block of a DSN.
type ReportRecipient struct {
	// FinalRecipient and OriginalRecipient are the addresses of
	// Final-Recipient and Original-Recipient, without their type
	// ("rfc822;"), as written.
	FinalRecipient    string
	OriginalRecipient string
	// Action is lower-cased: failed, delayed, delivered, relayed, expanded.
	Action string
	// Status is the enhanced status code, "5.1.1" (RFC 3463).
	Status string
	// DiagnosticCode is the remote server's reply, without its type
	// ("smtp;"): "550 5.1.1 <ann@example.net>: user unknown".
	DiagnosticCode string
	RemoteMTA      string
}

// ReportStore is what package inbound's Reports service reads and writes.
type ReportStore interface {
	// ReturnPathDomainExists says whether some account's domain that can
	// send (DomainStatus.CanSend: its return-path MX record was found in
	// DNS when it was verified) has domain as its bounce subdomain. A
	// pending or failed domain's is not: the MX would otherwise tell who
	// added which domain before its owner published anything.
	ReturnPathDomainExists(ctx context.Context, domain string) (bool, error)
	// ReportedMessage finds a message by id, whatever its account, with
	// its recipients (a report names no account); ECodeNotFound when
	// there is none (or it expired).
	ReportedMessage(ctx context.Context, messageID string) (*Message, error)
	// RecordReport applies what a report says of one recipient, in one
	// transaction: its new status (none for a delay), its event, and a
	// suppression. It is not fenced by a delivery's claim: a late bounce
	// wins over an attempt in flight, whose outcome is then dropped. A
	// recipient already in the outcome's status, or with MaxAsync events
	// of the outcome's type from reports already, is left as it is, with
	// no event.
	RecordReport(ctx context.Context, o *ReportOutcome) error
}

// ReportOutcome is what one report changes for one recipient.
type ReportOutcome struct {
	MessageID string
	Address   string
	// Status is the recipient's new status (bounced, complained), or ""
	// to change none (a delayed DSN).
	Status       RecipientStatus
	SMTPCode     int
	SMTPResponse string
	Event        *Event
	Suppress     *Suppression
	// MaxAsync bounds the events of Event's type that reports may leave
	// for the recipient: when it has that many already (async ones,
	// written by earlier reports), RecordReport changes and writes
	// nothing. It bounds repeated delays, which change no state, and
	// reports that turn a recipient from bounced to complained and back
	// again. 0 is no bound.
	MaxAsync int
}
