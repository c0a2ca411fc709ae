package compose

import (
	"fmt"
	"strings"

	"github.com/emersion/go-message/textproto"

	"github.com/mailroom/mailroom"
)

// ownHeaders are the fields the composer writes itself (or, for Bcc,
// never writes) and that a client's extra header must not duplicate or
// override. The API refuses them at accept time (docs/api.md "Sending"); refusing
// here as well keeps a message that slipped past from going out with two
// Froms or a Bcc field. Reply-To is here too: it comes from replyTo.
var ownHeaders = map[string]bool{
	"from": true, "to": true, "cc": true, "bcc": true, "reply-to": true,
	"subject": true, "date": true, "message-id": true, "mime-version": true,
	"dkim-signature": true, "return-path": true, "received": true,
}

// extraFields checks and encodes the client's extra headers.
//
// A client List-Unsubscribe (and its -Post partner) is allowed and, on
// marketing mail, replaces the composer's own pair: a sender with its own
// unsubscribe handling keeps it, and no message carries two.
func extraFields(hs []mailroom.Header) (fields, error) {
	var fs fields
	for _, h := range hs {
		if !IsFieldName(h.Name) {
			return nil, fmt.Errorf("compose: invalid header name %q", h.Name)
		}
		lower := strings.ToLower(h.Name)
		if ownHeaders[lower] || strings.HasPrefix(lower, "content-") {
			return nil, fmt.Errorf("compose: header %s is set by the service, not by the client", h.Name)
		}
		if strings.ContainsAny(h.Value, "\r\n") {
			return nil, fmt.Errorf("compose: header %s: value contains CR or LF", h.Name)
		}
		// RFC 2047 §5(1): non-ASCII becomes encoded-words, and so does
		// text that looks like one; other ASCII values, structured ones
		// included, pass unchanged.
		fs.add(h.Name, encodeText(h.Value))
	}
	return fs, nil
}

// IsFieldName reports whether s is an RFC 5322 §3.6.8 field-name (one or
// more printable US-ASCII characters other than the colon), by the check
// go-message's textproto makes before it writes a field.
func IsFieldName(s string) bool {
	if s == "" {
		return false
	}
	var h textproto.Header
	h.Add(s, "")
	_, err := h.Raw(s)
	return err == nil
}
