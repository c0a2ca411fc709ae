package mailroom

import (
	"strings"
	"time"
)

// Message is one accepted send (docs/api.md "Sending", §6): its content, as validated
// from the request, and its recipients, which are the delivery queue.
type Message struct {
	ID        string // "msg_…"
	AccountID string
	Status    MessageStatus

	From     Address
	To       []Address
	Cc       []Address
	Bcc      []Address
	ReplyTo  []Address
	Subject  string
	Category Category
	HTML     string
	// Text is the plain-text part; generated from HTML when only HTML was
	// given.
	Text        string
	Headers     []Header
	Attachments []Attachment
	Tags        map[string]string
	// Template is the template version the message was rendered from, nil
	// for none.
	Template *TemplateRef

	// Domain is the sending domain: From's domain, which signs the mail.
	Domain string
	// MessageIDHeader is the RFC 5322 Message-ID, without angle brackets,
	// fixed at accept time so that retries and the log show one id.
	MessageIDHeader string

	IdempotencyKey string
	// RequestDigest is the SHA-256 of the canonical request, to tell a
	// retry (same digest) from a reuse of the key (another digest).
	RequestDigest []byte

	CreatedAt   time.Time
	ScheduledAt *time.Time
	// RequireTLS is the send's requireTls (RFC 8689 REQUIRETLS): the mail
	// goes only over verified TLS to an MX an MTA-STS policy validates and
	// that advertises REQUIRETLS, or bounces with 5.7.30.
	RequireTLS bool
	// Tracking is what the message's copies are tracked for, resolved at
	// accept time from its domain's settings and its send's tracking
	// (ResolveTracking).
	Tracking Tracking
	// Links are a click-tracked message's links, in order, with their
	// clicks: stored when the message is first composed, read by
	// MessageStore.Message (the log). Nil before that and on every other
	// reading.
	Links []TrackedLink

	Recipients []*Recipient

	// OlderEventsCursor is set by MessageStore.Message when the timeline
	// it returns is cut to the newest MaxTimelineEvents: the cursor of
	// ListEvents, filtered by this message, that lists the older ones.
	// "" when the timeline is whole, and on every other reading.
	OlderEventsCursor string

	// Raw is the signed message when it is signed at accept: SMTP
	// submission takes messages whole and signs them then, so storage
	// keeps these bytes from the start and delivery sends them as they
	// are. Nil for a message composed from its fields at its first
	// attempt.
	Raw []byte
}

// Address is a mailbox: an optional display name and the address, whose
// domain is in A-labels (ASCII) so that SMTP and DNS can use it as it is.
type Address struct {
	Name    string `json:"name,omitempty"`
	Address string `json:"address"`
}

// String writes the mailbox as clients write it: "Name <addr>", with the
// name quoted when it holds characters RFC 5322 §3.2.3 calls specials.
func (a Address) String() string {
	if a.Name == "" {
		return a.Address
	}
	name := a.Name
	if strings.ContainsAny(name, `()<>[]:;@\,."`) {
		name = `"` + strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(name) + `"`
	}
	return name + " <" + a.Address + ">"
}

// Domain is the part after the last '@', lower case.
func (a Address) Domain() string {
	for i := len(a.Address) - 1; i >= 0; i-- {
		if a.Address[i] == '@' {
			return toLowerASCII(a.Address[i+1:])
		}
	}
	return ""
}

// Header is an extra header a client asked for.
type Header struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

// Attachment is a decoded attachment; ContentID makes it inline.
type Attachment struct {
	Filename    string `json:"filename"`
	ContentType string `json:"contentType"`
	ContentID   string `json:"contentId,omitempty"`
	Content     []byte `json:"content"`
}

// Category says whether mail is transactional or marketing (docs/api.md "Sending").
type Category string

const (
	CategoryTransactional Category = "transactional"
	CategoryMarketing     Category = "marketing"
)

// RecipientKind says which header named a recipient.
type RecipientKind string

const (
	KindTo  RecipientKind = "to"
	KindCc  RecipientKind = "cc"
	KindBcc RecipientKind = "bcc"
)

// Recipient is one address of a message and its delivery state. Each
// recipient row is also a queue entry: due at DueAt unless finished.
type Recipient struct {
	MessageID     string
	Address       string // the address alone, domain in A-labels
	Kind          RecipientKind
	Status        RecipientStatus
	Attempts      int
	LastAttemptAt *time.Time
	NextAttemptAt *time.Time
	SMTPCode      int
	SMTPResponse  string
	MX            string
	// Unencrypted says the last attempt's SMTP session ran in clear text:
	// the receiver offered no STARTTLS, or its TLS failed and the mail went
	// on without it (opportunistic TLS, RFC 7435).
	Unencrypted bool
	// Site is the destination site of the last attempt.
	Site string
	// LastDeferralReason is why the recipient was last deferred; it stays
	// after a later delivery, as history.
	LastDeferralReason DeferralReason
	// TLS is the TLS the last attempt's session ran under, nil in clear
	// or when no session was had.
	TLS *TLSInfo
	// Opens and Clicks count the engagement that came back from the
	// recipient's copy of a tracked message (docs/api.md "Engagement
	// tracking"), automated or not.
	Opens  int
	Clicks int
}

// Domain is the recipient's domain, which decides where the mail goes.
func (r *Recipient) Domain() string { return Address{Address: r.Address}.Domain() }

func toLowerASCII(s string) string {
	b := []byte(s)
	for i, c := range b {
		if 'A' <= c && c <= 'Z' {
			b[i] = c + 'a' - 'A'
		}
	}
	return string(b)
}
