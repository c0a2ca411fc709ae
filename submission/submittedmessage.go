package submission

import (
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"io"
	"mime"
	"net/mail"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/mailroom/mailroom"
)

// MaxSubmittedMessageBytes is the largest message SMTP submission takes
// (docs/api.md "SMTP submission": advertised in SIZE, 552 5.3.4 above),
// the size of the largest request body of the HTTP API.
const MaxSubmittedMessageBytes = 16 << 20

// Field names of the envelope, for validation errors about it.
const (
	fieldMailFrom = "MAIL FROM"
	fieldRcptTo   = "RCPT TO"
)

// submissionDigestVersion starts the digested text of a submission, so
// that it can never equal a SendRequest's digest (digestVersion) or a
// later form's.
const submissionDigestVersion = "mailroom.submission.v1\n"

// newSubmittedMessage turns a message as an SMTP client submitted it into
// the message to accept, its ID and CreatedAt given and Raw the bytes to
// sign. The message is parsed only as far as needed (docs/api.md "SMTP
// submission"): the header's fields are split, and the body is kept byte
// for byte. The header is held to the API's header policy
// (applyHeaderPolicy: trace fields removed; the fields Mailroom adds and
// those receivers trust, and control characters, refused), loses its Bcc
// fields (RFC 5322 §3.6.3: the receivers must not see them) and its
// Idempotency-Key, and gains a
// Message-ID and a Date when it lacks them (RFC 5322 §3.6: both are
// required, and §3.6.4's id is on the sending domain, as the send path
// makes it). The log's fields come from the header (From, Subject) and
// the envelope (the recipients: each is to or cc when the header names it
// there, bcc otherwise).
//
// It returns the envelope sender's domain too, which the caller checks
// like the From header's, m.Domain. Problems of the envelope and the
// header are one validation *Error.
func newSubmittedMessage(id string, now time.Time, mailFrom string, rcpts []string, raw []byte) (m *mailroom.Message, envelopeDomain string, err error) {
	var v mailroom.Validator
	m = &mailroom.Message{ID: id, Status: mailroom.MessageQueued, Category: mailroom.CategoryTransactional, CreatedAt: now}
	sender := strings.TrimSuffix(strings.TrimPrefix(strings.TrimSpace(mailFrom), "<"), ">")
	if sender == "" {
		v.Add(fieldMailFrom, "the envelope sender is empty (a null reverse-path); give an address on a verified domain of the account")
	} else if a, problem := envelopeAddress(sender); problem != "" {
		v.Add(fieldMailFrom, "%s", mailroom.OwnText(problem))
	} else {
		envelopeDomain = mailroom.Address{Address: a}.Domain()
	}
	keys := envelopeRecipients(&v, rcpts)

	msg, problem := splitSubmitted(raw)
	if problem != "" {
		v.Add("header", "%s", mailroom.OwnText(problem))
		return nil, "", v.Err()
	}
	msg.applyHeaderPolicy(&v)
	fromAddr := submittedFrom(&v, msg.values("From"))
	m.From, m.Domain = fromAddr, fromAddr.Domain()
	m.IdempotencyKey = mailroom.ResolveIdempotencyKey(&v, nil, msg.values("Idempotency-Key"))
	if err := v.Err(); err != nil {
		return nil, "", err
	}
	m.RequestDigest = submissionDigest(sender, keys, raw)

	if subject := msg.values("Subject"); len(subject) > 0 {
		m.Subject = headerText(subject[0])
	}
	to, cc := headerMailboxes(msg.values("To")), headerMailboxes(msg.values("Cc"))
	for _, k := range keys {
		r := &mailroom.Recipient{Address: k.address, Kind: mailroom.KindBcc, Status: mailroom.RecipientQueued}
		if a, ok := to[k.key]; ok {
			r.Kind, a.Address = mailroom.KindTo, k.address
			m.To = append(m.To, a)
		} else if a, ok := cc[k.key]; ok {
			r.Kind, a.Address = mailroom.KindCc, k.address
			m.Cc = append(m.Cc, a)
		} else {
			m.Bcc = append(m.Bcc, mailroom.Address{Address: k.address})
		}
		m.Recipients = append(m.Recipients, r)
	}

	msg.remove("Bcc")
	msg.remove("Idempotency-Key")
	if ids := msg.values("Message-ID"); len(ids) > 0 {
		m.MessageIDHeader = strings.TrimSuffix(strings.TrimPrefix(strings.TrimSpace(ids[0]), "<"), ">")
	} else {
		// RFC 5322 §3.6.4: a globally unique id on the sender's own
		// domain, as Sender makes it.
		m.MessageIDHeader = strings.TrimPrefix(m.ID, mailroom.PrefixMessage) + "@" + m.Domain
		msg.add("Message-ID", "<"+m.MessageIDHeader+">")
	}
	if len(msg.values("Date")) == 0 {
		// UTC, as compose writes it: the Date does not tell receivers
		// the server's zone.
		msg.add("Date", now.UTC().Format("Mon, 02 Jan 2006 15:04:05 -0700"))
	}
	m.Raw = msg.bytes()
	return m, envelopeDomain, nil
}

// envelopeRecipient is one envelope recipient: its address in canonical
// form, and its identity for finding it again (AddressKey).
type envelopeRecipient struct{ address, key string }

// envelopeRecipients checks the RCPT TO addresses: at least one, each
// valid, at most MaxRecipients once the same address given twice counts
// once (a client may repeat a RCPT; the mailbox gets one copy).
func envelopeRecipients(v *mailroom.Validator, rcpts []string) []envelopeRecipient {
	var out []envelopeRecipient
	seen := map[string]bool{}
	for i, r := range rcpts {
		a, problem := envelopeAddress(strings.TrimSuffix(strings.TrimPrefix(strings.TrimSpace(r), "<"), ">"))
		if problem != "" {
			v.AddAt(fieldRcptTo, i, "%s", mailroom.OwnText(problem))
			continue
		}
		if k := mailroom.AddressKey(a); !seen[k] {
			seen[k] = true
			out = append(out, envelopeRecipient{a, k})
		}
	}
	switch {
	case len(rcpts) == 0:
		v.Add(fieldRcptTo, "the message has no envelope recipient")
	case len(out) > mailroom.MaxRecipients:
		v.Add(fieldRcptTo, "the message has %d envelope recipients; at most %d are allowed per message (send several messages)", len(out), mailroom.MaxRecipients)
	}
	return out
}

// envelopeAddress parses an SMTP path's address (RFC 5321 §4.1.2, the
// angle brackets taken off) into its canonical form, or says what is
// wrong with it.
func envelopeAddress(s string) (string, string) {
	if s == "" {
		return "", "is empty"
	}
	a, err := mail.ParseAddress("<" + s + ">")
	if err != nil {
		return "", fmt.Sprintf("%q is not a valid address", mailroom.Excerpt(s, mailroom.MaxQuoted))
	}
	return mailroom.CanonicalAddrSpec(a.Address)
}

// submittedFrom is the From header's mailbox, whose domain must be a
// verified domain of the account: exactly one From field (RFC 5322 §3.6)
// holding one mailbox (with several, §3.6.2 wants a Sender, and which
// domain would sign would be a guess).
func submittedFrom(v *mailroom.Validator, values []string) mailroom.Address {
	if len(values) != 1 {
		if len(values) == 0 {
			v.Add("From", "the message has no From header; give one with an address on a verified domain of the account")
		} else {
			v.Add("From", "the message has %d From headers; give one", len(values))
		}
		return mailroom.Address{}
	}
	// Strictly: the lenient reading of To and Cc (the last <…> of a field
	// that does not parse) would let "<evil@elsewhere> <orders@ours>"
	// pass as ours, while mail clients show the first address, under the
	// account's DKIM signature.
	var list []mailroom.Address
	if parsed, err := mailboxParser.ParseList(values[0]); err == nil && len(parsed) == 1 {
		list = []mailroom.Address{{Name: strings.ToValidUTF8(parsed[0].Name, "\uFFFD"), Address: parsed[0].Address}}
	}
	if len(list) != 1 {
		v.Add("From", "the From header must hold one well-formed address (RFC 5322 §3.4) on a verified domain of the account, not %q", mailroom.Excerpt(strings.TrimSpace(values[0]), mailroom.MaxQuoted))
		return mailroom.Address{}
	}
	addr, problem := mailroom.CanonicalAddrSpec(list[0].Address)
	if problem != "" {
		v.Add("From", "%s", mailroom.OwnText(problem))
		return mailroom.Address{}
	}
	return mailroom.Address{Name: list[0].Name, Address: addr}
}

// headerMailboxes are the mailboxes of address fields (To, Cc), by
// AddressKey; a field that does not parse names none.
func headerMailboxes(values []string) map[string]mailroom.Address {
	out := map[string]mailroom.Address{}
	for _, val := range values {
		for _, a := range parseMailboxes(val) {
			if addr, problem := mailroom.CanonicalAddrSpec(a.Address); problem == "" {
				out[mailroom.AddressKey(addr)] = mailroom.Address{Name: a.Name, Address: addr}
			}
		}
	}
	return out
}

// mailboxParser parses address fields as clients write them. Display
// names in charsets the standard library does not know are let through
// undecoded instead of failing the address: only the address matters
// here, and the name is only shown in the log.
var mailboxParser = mail.AddressParser{WordDecoder: &mime.WordDecoder{
	CharsetReader: func(_ string, r io.Reader) (io.Reader, error) { return r, nil },
}}

// parseMailboxes parses an address list leniently, for the mailboxes a
// field names; nil when it does not parse. A field net/mail cannot read as
// a whole (an odd display name) still gives the one address in its angle
// brackets.
func parseMailboxes(value string) []mailroom.Address {
	list, err := mailboxParser.ParseList(value)
	if err != nil {
		open, close := strings.LastIndexByte(value, '<'), strings.LastIndexByte(value, '>')
		if open < 0 || close < open {
			return nil
		}
		a, err := mail.ParseAddress(value[open : close+1])
		if err != nil {
			return nil
		}
		list = []*mail.Address{a}
	}
	out := make([]mailroom.Address, len(list))
	for i, a := range list {
		out[i] = mailroom.Address{Name: strings.ToValidUTF8(a.Name, "\uFFFD"), Address: a.Address}
	}
	return out
}

// headerText is an unstructured field's value as the log shows it:
// encoded-words decoded (RFC 2047) where they can be, whitespace at the
// ends removed, valid UTF-8, at most the length of a subject.
func headerText(value string) string {
	s := strings.TrimSpace(value)
	if d, err := mailboxParser.WordDecoder.DecodeHeader(s); err == nil {
		s = d
	}
	s = strings.Map(func(r rune) rune {
		if r < ' ' && r != '\t' || r == 0x7f {
			return -1
		}
		return r
	}, strings.ToValidUTF8(s, "\uFFFD"))
	if utf8.RuneCountInString(s) > mailroom.MaxSubjectLength {
		s = string([]rune(s)[:mailroom.MaxSubjectLength])
	}
	return s
}

// submissionDigest is the SHA-256 of a submission as received: the
// envelope (the recipients in a fixed order, so that a retry that gives
// them in another is the same request) and the message's bytes. Each part
// is length-prefixed, so that no two submissions share a text.
func submissionDigest(mailFrom string, rcpts []envelopeRecipient, raw []byte) []byte {
	keys := make([]string, len(rcpts))
	for i, r := range rcpts {
		keys[i] = r.key
	}
	slices.Sort(keys)
	h := sha256.New()
	h.Write([]byte(submissionDigestVersion))
	part := func(b []byte) {
		h.Write(binary.BigEndian.AppendUint64(nil, uint64(len(b))))
		h.Write(b)
	}
	part([]byte(mailFrom))
	h.Write(binary.BigEndian.AppendUint64(nil, uint64(len(keys))))
	for _, k := range keys {
		part([]byte(k))
	}
	part(raw)
	return h.Sum(nil)
}

// crlf returns raw with every bare LF made CRLF; raw itself when it has
// none, which is what SMTP clients send.
func crlf(raw []byte) []byte {
	bare := 0
	for i, c := range raw {
		if c == '\n' && (i == 0 || raw[i-1] != '\r') {
			bare++
		}
	}
	if bare == 0 {
		return raw
	}
	out := make([]byte, 0, len(raw)+bare)
	for i, c := range raw {
		if c == '\n' && (i == 0 || raw[i-1] != '\r') {
			out = append(out, '\r')
		}
		out = append(out, c)
	}
	return out
}
