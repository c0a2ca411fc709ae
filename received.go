package mailroom

import (
	"context"
	"time"
)

// Receiving mail (docs/api.md "Receiving mail"): the inbound MX takes mail
// for every address of a verified receiving domain, checks it as a
// receiver does, stores it once and tells the application with an
// email.received event.

// PrefixReceived begins a received message's id; PrefixReceivedAttachment
// an attachment's, unique within its message.
const (
	PrefixReceived           = "rcv_"
	PrefixReceivedAttachment = "att_"
)

// EventEmailReceived is the event of a message received for a receiving
// domain: its data is ReceivedEventData.
const EventEmailReceived = "email.received"

// ScopeReceive reads received mail (GET /v1/received…).
const ScopeReceive Scope = "receive"

// PurposeReceiving is the required MX record of a receiving domain,
// pointing at the service's MX host.
const PurposeReceiving RecordPurpose = "receiving"

// DefaultReceiveMaxSize is --receive-max-size's default: 25 MiB, what the
// large mailbox providers take.
const DefaultReceiveMaxSize = 25 << 20

// AuthResult is one verdict of a receiver's checks, an RFC 8601 §2.7
// result word.
type AuthResult string

const (
	AuthPass      AuthResult = "pass"
	AuthFail      AuthResult = "fail"
	AuthSoftFail  AuthResult = "softfail"
	AuthNeutral   AuthResult = "neutral"
	AuthNone      AuthResult = "none"
	AuthTempError AuthResult = "temperror"
	AuthPermError AuthResult = "permerror"
)

// DKIMSignatureResult is the verdict of one DKIM-Signature (RFC 6376 §6).
type DKIMSignatureResult struct {
	Domain   string     `json:"domain"`
	Selector string     `json:"selector"`
	Result   AuthResult `json:"result"`
}

// ReceivedAuthentication are a received message's verdicts: SPF for the
// envelope sender (RFC 7208), DKIM the best of its signatures, each listed
// in DKIMSignatures, and DMARC for the From domain (RFC 7489).
type ReceivedAuthentication struct {
	SPF            AuthResult            `json:"spf"`
	DKIM           AuthResult            `json:"dkim"`
	DMARC          AuthResult            `json:"dmarc"`
	DKIMSignatures []DKIMSignatureResult `json:"dkimSignatures"`
}

// ReceivedHeader is one header field of a received message, in order,
// its value decoded (RFC 2047) where it could be.
type ReceivedHeader struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

// ReceivedAttachment is a part of a received message that is not its text
// or HTML body. Size is in decoded bytes; the bytes themselves are read
// alone (ReceivedStore.ReceivedAttachment).
type ReceivedAttachment struct {
	ID          string `json:"id"`
	Filename    string `json:"filename"`
	ContentType string `json:"contentType"`
	Size        int64  `json:"size"`
	// ContentID is the part's Content-ID without its <>, for inline
	// images the HTML refers to as cid: (RFC 2392).
	ContentID string `json:"contentId,omitempty"`
	// Content is the decoded bytes, set when the message is stored and
	// when one attachment is read, never in lists.
	Content []byte `json:"-"`
}

// ReceivedMessage is one SMTP transaction taken for one account's
// receiving domains (one per account when recipients belong to several).
type ReceivedMessage struct {
	ID        string
	AccountID string
	// MailFrom is the envelope sender ("" for the null sender <>), and
	// Recipients the envelope recipients at the account's receiving
	// domains, as RCPT gave them.
	MailFrom   string
	Recipients []string
	// From, To, Cc, Subject and MessageID are read from the header.
	From      string
	To        []string
	Cc        []string
	Subject   string
	MessageID string
	// RemoteIP and Helo are the sending client's address and EHLO name.
	RemoteIP   string
	Helo       string
	ReceivedAt time.Time

	Authentication ReceivedAuthentication
	Headers        []ReceivedHeader
	Text           string
	HTML           string
	Attachments    []ReceivedAttachment
	// ParseProblem says what of the message could not be parsed ("" when
	// all of it was): a malformed message is stored all the same, raw,
	// with what could be read.
	ParseProblem string
	// Raw is the stored message: the Authentication-Results and Received
	// fields the service added, then the bytes received. Set when stored;
	// read alone (ReceivedStore.ReceivedRaw).
	Raw []byte
	// Size is len(Raw).
	Size int64
}

// ReceivedFilter selects received messages (GET /v1/received): To is an
// envelope recipient, From the header's From address; Since and Until
// bound ReceivedAt (Until excluded); zero values select all.
type ReceivedFilter struct {
	To    string
	From  string
	Since time.Time
	Until time.Time
}

// ReceivedEventData is the data of an email.received event.
type ReceivedEventData struct {
	ReceivedID     string                 `json:"receivedId"`
	From           string                 `json:"from"`
	To             []string               `json:"to"`
	Cc             []string               `json:"cc"`
	Recipients     []string               `json:"recipients"`
	Subject        string                 `json:"subject"`
	MessageID      string                 `json:"messageId"`
	ReceivedAt     time.Time              `json:"receivedAt"`
	Authentication ReceivedAuthentication `json:"authentication"`
	Attachments    []ReceivedAttachment   `json:"attachments"`
}

// ReceivingDomain is a verified receiving domain, what the MX needs at
// RCPT: which account takes mail for it.
type ReceivingDomain struct {
	AccountID string
	Name      string
}

// ReceivedStore keeps received mail.
type ReceivedStore interface {
	// ReceivingDomains finds the verified receiving domains named name
	// (normalised), one per account that has it; none is an empty list.
	ReceivingDomains(ctx context.Context, name string) ([]ReceivingDomain, error)
	// SaveReceived stores each message (raw, parsed, attachments) with its
	// event (email.received), all in one transaction: none is stored
	// unless all are, and never half of one.
	SaveReceived(ctx context.Context, msgs []*ReceivedMessage, events []*Event) error
	// ListReceived lists an account's received messages newest first,
	// without Raw, Headers, Text, HTML or attachment bytes.
	ListReceived(ctx context.Context, accountID string, f ReceivedFilter, p Page) ([]*ReceivedMessage, string, error)
	// Received finds one of an account's received messages, parsed,
	// without Raw or attachment bytes; another account's is ECodeNotFound.
	Received(ctx context.Context, accountID, id string) (*ReceivedMessage, error)
	// ReceivedRaw is a received message's stored bytes.
	ReceivedRaw(ctx context.Context, accountID, id string) ([]byte, error)
	// ReceivedAttachment is one attachment of a received message, with
	// its bytes.
	ReceivedAttachment(ctx context.Context, accountID, id, attachmentID string) (*ReceivedAttachment, error)
	// DeleteReceivedBefore deletes up to limit messages received before
	// t (retention), with their attachments, and says how many.
	DeleteReceivedBefore(ctx context.Context, t time.Time, limit int) (int, error)
}
