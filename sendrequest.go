package mailroom

import (
	"cmp"
	"fmt"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/k3a/html2text"
)

// Limits of a send request (docs/api.md "Sending", §11).
const (
	MaxRecipients    = 50      // to, cc and bcc together
	MaxReplyTo       = 50      // the contract is silent; as many as recipients
	MaxSubjectLength = 998     // characters; RFC 5322 §2.1.1 line length, as the contract puts it
	MaxBodyPartBytes = 5 << 20 // html and text, each (docs/api.md "Limits")
)

// SendRequest is the body of POST /v1/send and one item of a batch
// (docs/api.md "Sending"), as decoded from JSON. Fields where "absent" and
// "empty" mean different things are pointers: an empty category, template
// or idempotency key is an error, an absent one is not. For html and text
// an empty string is the same as absent.
type SendRequest struct {
	From           string         `json:"from,omitempty"`
	To             AddressList    `json:"to,omitempty"`
	Cc             AddressList    `json:"cc,omitempty"`
	Bcc            AddressList    `json:"bcc,omitempty"`
	ReplyTo        AddressList    `json:"replyTo,omitempty"`
	Subject        string         `json:"subject,omitempty"`
	Category       *string        `json:"category,omitempty"`
	HTML           string         `json:"html,omitempty"`
	Text           string         `json:"text,omitempty"`
	Template       *string        `json:"template,omitempty"`
	Variables      Variables      `json:"variables,omitempty"`
	Headers        HeaderFields   `json:"headers,omitempty"`
	Attachments    AttachmentList `json:"attachments,omitempty"`
	Tags           TagMap         `json:"tags,omitempty"`
	ScheduledAt    *string        `json:"scheduledAt,omitempty"`
	IdempotencyKey *string        `json:"idempotencyKey,omitempty"`
	// RequireTLS is requireTls (RFC 8689 REQUIRETLS, docs/api.md "TLS
	// policy"): false is the same as absent.
	RequireTLS bool `json:"requireTls,omitempty"`
	// Tracking is the send's tracking (docs/api.md "Engagement
	// tracking"): each field given overrides the domain's setting for
	// this message, one left out follows it (ResolveTracking).
	Tracking *TrackingOverride `json:"tracking,omitempty"`
	// SourceDigest, when set, stands for the request in its Digest,
	// instead of the canonical form. It is the SHA-256 of the request as
	// another surface received it (Resend's routes: its JSON text as
	// sent): that surface translates before it validates (Resend's "in 5
	// minutes" becomes a time by the server's clock, an attachment's path
	// the bytes fetched from it), so that the translation of a retry can
	// differ from the first one's although the client sent the same
	// request. A batch whose key covers its items sets it too, to digest
	// each item as part of its batch (package send, BatchOptions).
	SourceDigest []byte `json:"-"`
}

// SendAttachment is one attachment as sent: the content in base64.
type SendAttachment struct {
	Filename    string `json:"filename"`
	Content     string `json:"content"`
	ContentType string `json:"contentType,omitempty"`
	ContentID   string `json:"contentId,omitempty"`
}

// Validate checks the request against every rule of docs/api.md "Sending" and returns
// the Message it describes, without ID and AccountID, which the service
// assigns. idempotencyHeader holds the Idempotency-Key header's values, one
// per field line (none when absent). tpl is the request's template rendered
// with its variables (package template's ForSend), nil when it names none: it gives
// the bodies, and the sender and subject the request leaves out. All
// problems, the template's among them, are reported together in one
// validation *Error.
func (r *SendRequest) Validate(now time.Time, idempotencyHeader []string, tpl *RenderedTemplate) (*Message, error) {
	var v Validator
	usesTemplate := r.Template != nil
	if usesTemplate && tpl == nil {
		return nil, Errorf(ECodeInternal, "template %q was not rendered", *r.Template)
	}
	from, subject := r.From, r.Subject
	if usesTemplate {
		from, subject = cmp.Or(from, tpl.From), cmp.Or(subject, tpl.Subject)
	}

	m := &Message{
		Status:    MessageQueued,
		CreatedAt: now,
		Category:  CategoryTransactional,
	}

	switch {
	case from != "":
		if a, problem := parseAddress(from); problem != "" {
			v.Add("from", "%s", OwnText(problem))
		} else {
			m.From = a
			m.Domain = a.Domain()
		}
	case usesTemplate:
		v.Add("from", `is required: the template gives none; for example "Acme <hello@acme.example>", its domain verified`)
	default:
		v.Add("from", `is required, for example "Acme <hello@acme.example>"; its domain must be verified`)
	}

	to := validateAddressList(&v, "to", r.To)
	cc := validateAddressList(&v, "cc", r.Cc)
	bcc := validateAddressList(&v, "bcc", r.Bcc)
	replyTo := validateAddressList(&v, "replyTo", r.ReplyTo)
	if len(r.To) == 0 {
		v.Add("to", "is required: give at least one recipient address")
	}
	if len(r.ReplyTo) > MaxReplyTo {
		v.Add("replyTo", "has %d addresses; at most %d are allowed", len(r.ReplyTo), MaxReplyTo)
	}
	validateRecipientSet(&v, []listedAddresses{to, cc, bcc})
	m.To, m.Cc, m.Bcc, m.ReplyTo = to.addresses(), cc.addresses(), bcc.addresses(), replyTo.addresses()

	switch {
	case subject != "":
		if msg := CheckSubject(subject); msg != "" {
			if r.Subject == "" {
				msg = "as rendered from the template, " + msg
			}
			v.Add("subject", "%s", msg)
		}
		m.Subject = subject
	case usesTemplate && tpl.Failed():
		// Not rendered: the problems say why.
	case usesTemplate:
		v.Add("subject", "renders empty with these variables; a message needs a subject")
	default:
		v.Add("subject", "is required (1 to %d characters)", MaxSubjectLength)
	}

	if r.Category != nil {
		switch c := Category(*r.Category); c {
		case CategoryTransactional, CategoryMarketing:
			m.Category = c
		default:
			v.Add("category", `must be "transactional" (the default) or "marketing", not %q`, *r.Category)
		}
	}

	validateBody(&v, r, m, tpl)
	if usesTemplate {
		v.Merge(&tpl.Problems)
		m.Template = tpl.Ref
	} else if r.Variables.Present() {
		v.Add("variables", "are for a template: give template as well, or leave variables out")
	}

	m.Headers = validateHeaders(&v, r.Headers)
	m.Attachments = validateAttachments(&v, r.Attachments)
	m.Tags = validateTags(&v, r.Tags)

	if r.ScheduledAt != nil {
		if at, err := ParseScheduledAt(*r.ScheduledAt, now); err != nil {
			v.Add("scheduledAt", "%s", fieldMessage(err))
		} else if at.After(now) {
			m.ScheduledAt = at
			m.Status = MessageScheduled
		}
	}

	m.IdempotencyKey = ResolveIdempotencyKey(&v, r.IdempotencyKey, idempotencyHeader)
	m.RequireTLS = r.RequireTLS

	if err := v.Err(); err != nil {
		return nil, err
	}
	m.RequestDigest = r.Digest()
	status := RecipientQueued
	if m.Status == MessageScheduled {
		status = RecipientScheduled
	}
	for _, l := range []struct {
		kind  RecipientKind
		addrs []Address
	}{{KindTo, m.To}, {KindCc, m.Cc}, {KindBcc, m.Bcc}} {
		for _, a := range l.addrs {
			m.Recipients = append(m.Recipients, &Recipient{Address: a.Address, Kind: l.kind, Status: status})
		}
	}
	return m, nil
}

// listedAddresses is one address field after parsing: the addresses that
// parsed, each with its index in the request, and how many there were.
type listedAddresses struct {
	field string
	given int
	ok    []indexedAddress
}

type indexedAddress struct {
	index int
	addr  Address
}

func (l listedAddresses) addresses() []Address {
	var out []Address
	for _, a := range l.ok {
		out = append(out, a.addr)
	}
	return out
}

// validateAddressList parses each address of a list field, reporting a
// problem at its index.
func validateAddressList(v *Validator, field string, list AddressList) listedAddresses {
	l := listedAddresses{field: field, given: len(list)}
	for i, s := range list {
		a, problem := parseAddress(s)
		if problem != "" {
			v.AddAt(field, i, "%s", OwnText(problem))
			continue
		}
		l.ok = append(l.ok, indexedAddress{i, a})
	}
	return l
}

// validateRecipientSet applies the rules over to, cc and bcc together: at
// most MaxRecipients, and each mailbox once (compared by AddressKey).
func validateRecipientSet(v *Validator, lists []listedAddresses) {
	type seen struct {
		field string
		index int
	}
	first := map[string]seen{}
	total, overField := 0, ""
	for _, l := range lists {
		if total <= MaxRecipients && total+l.given > MaxRecipients {
			overField = l.field
		}
		total += l.given
		for _, a := range l.ok {
			key := AddressKey(a.addr.Address)
			if f, dup := first[key]; dup {
				v.AddAt(l.field, a.index, "%s is already a recipient (%s[%d]); each address may appear once across to, cc and bcc", a.addr.Address, f.field, f.index)
				continue
			}
			first[key] = seen{l.field, a.index}
		}
	}
	if total > MaxRecipients {
		v.Add(overField, "to, cc and bcc together have %d addresses; at most %d are allowed per message (send several messages, or use /v1/send/batch)", total, MaxRecipients)
	}
}

// CheckSubject applies the subject rules; the caller has checked that it
// is not empty.
func CheckSubject(s string) string {
	if n := utf8.RuneCountInString(s); n > MaxSubjectLength {
		return fmt.Sprintf("has %d characters; at most %d are allowed", n, MaxSubjectLength)
	}
	return checkHeaderText(s)
}

// checkHeaderText refuses what must never reach a header: CR and LF, which
// would end the header and start another (header injection), and the other
// control characters except horizontal tab (RFC 5322 §3.2.2 WSP).
func checkHeaderText(s string) string {
	for _, r := range s {
		switch {
		case r == '\r' || r == '\n':
			return "must not contain line breaks (CR or LF): they would end the header and let the rest be read as new headers"
		case r != '\t' && unicode.IsControl(r):
			return fmt.Sprintf("must not contain control characters such as %U", r)
		}
	}
	return ""
}

// validateBody checks html and text, the request's or its template's as
// rendered, and generates the text part when only html is given, so that
// every message has a plain-text alternative.
func validateBody(v *Validator, r *SendRequest, m *Message, tpl *RenderedTemplate) {
	html, text := r.HTML, r.Text
	if r.Template != nil {
		if r.HTML != "" || r.Text != "" {
			v.Add("template", "cannot be combined with html or text; the template gives the content")
			return
		}
		if tpl.Failed() {
			return
		}
		html, text = tpl.HTML, tpl.Text
		if html == "" && text == "" {
			v.Add("html", "the template renders no html and no text with these variables")
			return
		}
	} else if html == "" && text == "" {
		v.Add("html", "html or text is required (or both); with html alone a text part is generated from it")
		return
	}
	ok := CheckBodyPart(v, "html", html)
	ok = CheckBodyPart(v, "text", text) && ok
	if !ok {
		// Not rendered: turning megabytes of refused HTML into text
		// would be work for nothing.
		return
	}
	m.HTML, m.Text = html, text
	if m.Text == "" {
		m.Text = HTMLToText(html)
	}
}

// CheckBodyPart applies the size limit of docs/api.md "Limits" to html or text, and
// refuses NUL, which has no place in a message (RFC 5321 §4.5.2, RFC 5322
// §2.3).
func CheckBodyPart(v *Validator, field, s string) bool {
	if len(s) > MaxBodyPartBytes {
		v.Add(field, "has %d octets; at most %d (5 MiB) are allowed", len(s), MaxBodyPartBytes)
		return false
	}
	if strings.IndexByte(s, 0) >= 0 {
		v.Add(field, "must not contain NUL characters")
		return false
	}
	return true
}

// HTMLToText renders HTML as the plain-text alternative of a message:
// links as "text <url>", list items with " - ", "\n" line breaks (the MIME
// writer turns them into CRLF).
func HTMLToText(html string) string {
	return strings.TrimSpace(html2text.HTML2TextWithOptions(html,
		html2text.WithUnixLineBreaks(), html2text.WithLinksInnerText(), html2text.WithListSupport()))
}

// fieldMessage returns the text of a one-field validation error, to be
// reported under another field name.
func fieldMessage(err error) string {
	if e, ok := err.(*Error); ok {
		if len(e.Details) == 1 {
			return e.Details[0].Message
		}
		return e.Message
	}
	return err.Error()
}
