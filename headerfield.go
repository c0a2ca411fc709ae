package mailroom

import "strings"

// HeaderFieldKind is what a header field is to Mailroom, by its name: who
// writes it. It is the one header policy of every surface (docs/api.md
// "Sending" and "SMTP submission"): POST /v1/send refuses every kind but
// HeaderCustom in its headers object, and SMTP submission, which is given
// a whole message, keeps its message fields and removes or refuses the
// rest by kind.
type HeaderFieldKind uint8

const (
	// HeaderCustom is a client's own field (X-*, In-Reply-To, References,
	// Precedence, …): allowed on every surface.
	HeaderCustom HeaderFieldKind = iota
	// HeaderMessageField is a field of the message itself (RFC 5322 §3.6:
	// originator, destination, identification and informational fields,
	// the date) or of its MIME structure (RFC 2045 §3, Content-*). The
	// API writes each from a field of the request; a submitted message
	// carries its own.
	HeaderMessageField
	// HeaderServiceAdded is a field Mailroom adds to every copy on the
	// way out: the DKIM signature (RFC 6376 §3.5), the one-click
	// unsubscribe pair of marketing mail (RFC 8058 §3.1). One a client
	// wrote would be the wrong one, or a second one.
	HeaderServiceAdded
	// HeaderTrace is a trace field (RFC 5322 §3.6.7) that servers add as
	// the message travels (RFC 5321 §4.4): Received, and Return-Path,
	// which the last one writes from the envelope.
	HeaderTrace
	// HeaderReceiverTrusted is a field that receivers read as written by
	// a server they trust (its verdicts: RFC 8601 §5, RFC 7208 §9.1; the
	// ARC chain, RFC 8617 §4; the final delivery) or as a mailbox owner's
	// resending (RFC 5322 §3.6.6). A sender who could write one could
	// forge the receiver's own verdicts, or name hidden recipients
	// (Resent-Bcc) to all.
	HeaderReceiverTrusted
)

// reservedHeaderField is the kind of a field that is not HeaderCustom,
// with why a client may not give it, said as the API says it: who writes
// it, or what to give instead.
type reservedHeaderField struct {
	kind HeaderFieldKind
	why  string
}

// reservedHeaderFields are the reserved fields by lower-case name.
var reservedHeaderFields = map[string]reservedHeaderField{
	"from":         {HeaderMessageField, "use the from field"},
	"to":           {HeaderMessageField, "use the to field"},
	"cc":           {HeaderMessageField, "use the cc field"},
	"bcc":          {HeaderMessageField, "use the bcc field"},
	"reply-to":     {HeaderMessageField, "use the replyTo field"},
	"subject":      {HeaderMessageField, "use the subject field"},
	"sender":       {HeaderMessageField, "Mailroom sets the sender from the from field"},
	"date":         {HeaderMessageField, "Mailroom sets it when the message is accepted"},
	"message-id":   {HeaderMessageField, "Mailroom sets it on the sending domain"},
	"mime-version": {HeaderMessageField, "Mailroom writes the MIME structure"},

	"dkim-signature":        {HeaderServiceAdded, "Mailroom signs the message with the domain's key"},
	"list-unsubscribe":      {HeaderServiceAdded, `Mailroom sets it for mail with category "marketing" (RFC 8058)`},
	"list-unsubscribe-post": {HeaderServiceAdded, `Mailroom sets it for mail with category "marketing" (RFC 8058)`},

	"return-path": {HeaderTrace, "the receiving server adds it from the envelope"},
	"received":    {HeaderTrace, "servers add it as the message travels"},

	"authentication-results": {HeaderReceiverTrusted, "the receiving server writes its verdict there (RFC 8601 §5); a sender must not"},
	"received-spf":           {HeaderReceiverTrusted, "the receiving server writes its SPF verdict there (RFC 7208 §9.1); a sender must not"},
	"delivered-to":           {HeaderReceiverTrusted, "the receiving server adds it on delivery; a sender must not"},
}

// reservedHeaderFieldFamilies are families of reserved fields, by
// lower-case prefix.
var reservedHeaderFieldFamilies = []struct {
	prefix string
	reservedHeaderField
}{
	{"content-", reservedHeaderField{HeaderMessageField, "Content-* fields are Mailroom's, which writes the MIME structure"}},
	{"arc-", reservedHeaderField{HeaderReceiverTrusted, "ARC-* fields are the trust chain of forwarding servers (RFC 8617 §4); a sender must not write them"}},
	{"resent-", reservedHeaderField{HeaderReceiverTrusted, "Resent-* fields record a resending by a mailbox's owner (RFC 5322 §3.6.6), not a first sending"}},
}

// ClassifyHeaderField returns the kind of the field named name (any case)
// and, for any kind but HeaderCustom, why a client may not give it among
// a send's headers.
func ClassifyHeaderField(name string) (kind HeaderFieldKind, why string) {
	lower := strings.ToLower(name)
	if r, ok := reservedHeaderFields[lower]; ok {
		return r.kind, r.why
	}
	for _, f := range reservedHeaderFieldFamilies {
		if strings.HasPrefix(lower, f.prefix) {
			return f.kind, f.why
		}
	}
	return HeaderCustom, ""
}

// CheckHeaderFieldText applies the API's rule for a header value (no CR
// or LF, no control character but tab) to an unfolded field value of a
// whole message, so that what a surface accepts it delivers as written
// and the log shows as it is. It says what is wrong, or "".
func CheckHeaderFieldText(value string) string { return checkHeaderText(value) }
