package mailroom

import (
	"context"
	"strings"
	"time"
)

// Delivery is one SMTP transaction's worth of work: one message to one or
// more recipients at one destination domain (docs/design.md "How mail is delivered": several
// recipients of one domain in one transaction).
type Delivery struct {
	MessageID string
	// Domain is the recipients' domain, in A-labels: where MX lookups go.
	Domain string
	// MailFrom is the envelope sender (RFC 5321 §4.1.1.2), on the bounce
	// subdomain of the sending domain, with a token that names the message
	// (and the recipient when there is one).
	MailFrom   string
	Recipients []string
	// Data is the signed RFC 5322 message, sent as it is on every attempt.
	Data []byte
	// MayStart, when set, is asked once a connection slot is held (or the
	// wait for one has failed), before a session is opened or reused.
	// False means this node may no longer send (it is draining, or its
	// claims may be released to other nodes): nothing is sent, and every
	// result is NotAttempted, so that the delivery is handed back rather
	// than counted as an attempt or sent twice.
	MayStart func() bool
	// IPPool names the sending domain's pool of source addresses
	// (--ip-pool); "" is the default pool, or the system's choice when
	// there are no pools.
	IPPool string
	// PreferMX is the host to try first when it is still one of the
	// domain's MX hosts: where a greylisted recipient was refused, since
	// greylisters remember the triplet per host (RFC 6647 §2.1).
	PreferMX string
	// FirstAttempt says no recipient of the delivery was attempted
	// before: a plain 4.7.1 or 4.2.0 is then greylisting
	// (mailroom.IsGreylisting).
	FirstAttempt bool
	// RequireTLS is the send's requireTls (RFC 8689 REQUIRETLS), TLSMode
	// the sending domain's tls: with the recipient domain's MTA-STS policy
	// they make the delivery's TLSRequirement.
	RequireTLS bool
	TLSMode    TLSMode
	// Recorded, when set, is closed once the delivery's outcome is
	// durable in storage (or its writing was given up). Until then the
	// transport holds each session that carried the delivery: it starts
	// no other transaction on it and neither closes nor quits it. A crash
	// then repeats only what was in progress on each connection, never a
	// transaction whose outcome was known and still waiting in the group
	// commit behind the connection's next ones (docs/api.md "After a
	// crash"); group commit still batches the outcomes of all the
	// connections. Nil: a session is free once its transaction ends.
	Recorded <-chan struct{}
}

// NotAttempted returns the results of a delivery that sent nothing because
// its MayStart said no.
func (d *Delivery) NotAttempted() []RecipientResult {
	out := make([]RecipientResult, len(d.Recipients))
	for i, r := range d.Recipients {
		out[i] = RecipientResult{Recipient: r, Outcome: NotAttempted,
			Response: "not attempted: the node stopped sending before a session began"}
	}
	return out
}

// MayNotStart reports whether d must not open a session now.
func (d *Delivery) MayNotStart() bool { return d.MayStart != nil && !d.MayStart() }

// Outcome classifies an attempt for one recipient (docs/design.md "How mail is delivered").
type Outcome int

const (
	// Deferred: a 4xx reply, a network error, or anything unclear; the
	// recipient is retried later.
	Deferred Outcome = iota
	// Delivered: the receiving server answered 2xx to the data.
	Delivered
	// Bounced: a 5xx reply; permanent.
	Bounced
	// NotAttempted: nothing was sent, because the delivery's MayStart said
	// no; the recipients are handed back unattempted.
	NotAttempted
)

// RecipientResult is what happened to one recipient of a Delivery.
type RecipientResult struct {
	Recipient string
	Outcome   Outcome
	// Code is the SMTP reply code, 0 when no reply came (a network error).
	Code int
	// Enhanced is the RFC 3463 status code ("5.1.1"), when the reply had one.
	Enhanced string
	// Response is the server's reply text, or what went wrong without one.
	Response string
	// MX is the host that answered (or was tried last).
	MX string
	// Unencrypted reports that the session with MX that gave this result
	// ran in clear text: the host offered no STARTTLS, refused it, or
	// failed the TLS handshake, and the transaction went on unencrypted,
	// as opportunistic TLS allows (RFC 7435; RFC 3207 §4). False
	// when the session ran under TLS, when no session was had (no route,
	// no answer), and in capture, which sends nothing.
	Unencrypted bool
	// Site is the destination's site (mailroom.SiteProfile.Name), when
	// the transport knows it.
	Site string
	// Reason is why a deferred recipient was deferred, when the transport
	// knows better than the reply (site_suspended, a connection failure);
	// empty, NewAttempt classifies the reply (ClassifyDeferral).
	Reason DeferralReason
	// RetryAt, when set, is the earliest next attempt for a deferred
	// recipient: the site's next free place, or its suspension's end. The
	// retry schedule's delay is not applied then. For NotAttempted it is
	// when the recipient is handed back for.
	RetryAt time.Time
	// TLS is the TLS of the session that gave this result, nil when it
	// ran in clear or none was had.
	TLS *TLSInfo
}

// Transport sends deliveries: straight to recipients' MX hosts, through a
// relay, or into capture (package smtp). It is safe for concurrent use and
// returns one result per recipient of d, in order.
type Transport interface {
	Deliver(ctx context.Context, d *Delivery) []RecipientResult
	Close() error
}

// DKIMKey is what signing needs of a sending domain.
type DKIMKey struct {
	Domain   string
	Selector string
	// PrivateKeyPKCS8 is the opened (not sealed) private key: RSA, or
	// Ed25519 for a key in Also.
	PrivateKeyPKCS8 []byte
	// Also are further keys of the domain that sign beside this one, each
	// with a DKIM-Signature of its own (RFC 6376 §4.2 lets a message carry
	// several; RFC 8463 §3 pairs Ed25519 with RSA for verifiers that know
	// only RSA). Their own Also is ignored.
	Also []DKIMKey
}

// Composer renders a message as RFC 5322 bytes (package compose).
type Composer interface {
	// Compose returns m as RFC 5322 bytes. Mail that every recipient gets
	// alike is signed, once: the bytes begin with their DKIM-Signature
	// field (IsSigned). Mail composed per recipient (marketing, whose
	// every copy carries its own List-Unsubscribe, RFC 8058) comes back
	// unsigned: the part common to every copy, which Copies completes.
	Compose(m *Message, key DKIMKey) ([]byte, error)
	// Copies prepares the per-recipient copies of base (unsigned, as
	// Compose returned it): see CopyMaker.
	Copies(base []byte, key DKIMKey) (CopyMaker, error)
}

// CopyMaker makes the per-recipient copies of one message composed per
// recipient (Composer.Copies): marketing mail, whose copies carry their
// own List-Unsubscribe fields, and tracked mail, whose copies carry their
// own HTML part (docs/api.md "Engagement tracking").
type CopyMaker interface {
	// HTML is the text of the common part's HTML part, decoded; "" when
	// it has none. A tracked copy's HTML is made from it.
	HTML() string
	// Copy returns one recipient's copy: fields, then a DKIM signature
	// covering them and the rest, in front of the common part, whose HTML
	// part holds html instead when html is not "". The same arguments
	// always give the same bytes, so a retry sends what the first attempt
	// sent.
	Copy(fields []Header, html string) ([]byte, error)
}

// RawSigner DKIM-signs a message that a client wrote whole, SMTP
// submission's (package compose): the sign-only path beside Composer,
// which builds messages from fields.
type RawSigner interface {
	// SignRaw returns raw (CRLF line endings, its header ended by an
	// empty line) unchanged behind a DKIM-Signature field made with key,
	// over the header fields Compose signs.
	SignRaw(raw []byte, key DKIMKey) ([]byte, error)
}

// IsSigned says whether raw, as a Composer made it and storage keeps it,
// is signed (sent as it is to every recipient) rather than the unsigned
// common part of mail composed per recipient.
func IsSigned(raw []byte) bool {
	const field = "DKIM-Signature:"
	return len(raw) >= len(field) && strings.EqualFold(string(raw[:len(field)]), field)
}

// Signed is a message ready to be sent: what storage keeps of it, and how
// each recipient's bytes are made from that.
type Signed struct {
	// Raw is the stored bytes: the signed message every recipient is sent,
	// or, for mail composed per recipient, the unsigned part common to
	// their copies.
	Raw []byte
	// ReturnPath is the sending domain's bounce subdomain, the envelope
	// sender's domain.
	ReturnPath string
	// Copy is set for mail composed per recipient (marketing): it returns
	// the signed copy recipient is sent (the same bytes on every call).
	Copy func(recipient string) ([]byte, error)
	// IPPool is the sending domain's pool of source addresses, "" for
	// the default.
	IPPool string
	// TLSMode is the sending domain's tls.
	TLSMode TLSMode
}

// For returns the bytes recipient is sent.
func (s *Signed) For(recipient string) ([]byte, error) {
	if s.Copy == nil {
		return s.Raw, nil
	}
	return s.Copy(recipient)
}

// Signer returns a message ready to be sent, composing, signing and
// storing it on first use (package delivery).
type Signer interface {
	Signed(ctx context.Context, m *MessageSummary) (*Signed, error)
}
