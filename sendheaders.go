package mailroom

import (
	"fmt"
	"sort"
	"strings"
)

// Limits of the extra headers.
const (
	maxHeaderNameLength  = 76       // leaves room for ": " and a value on a 78-character line (RFC 5322 §2.1.1)
	maxHeaderValueLength = 998      // octets, RFC 5322 §2.1.1
	MaxHeaders           = 100      // per message (docs/api.md "Limits")
	MaxHeaderBytes       = 16 << 10 // names and values together, per message (docs/api.md "Limits")
)

// reservedHeaders are the headers Mailroom writes itself, by lower-case
// name, with what to do instead. Any Content-* header is reserved too: the
// MIME structure is Mailroom's.
var reservedHeaders = map[string]string{
	"from":                  "use the from field",
	"to":                    "use the to field",
	"cc":                    "use the cc field",
	"bcc":                   "use the bcc field",
	"reply-to":              "use the replyTo field",
	"subject":               "use the subject field",
	"sender":                "Mailroom sets the sender from the from field",
	"date":                  "Mailroom sets it when the message is accepted",
	"message-id":            "Mailroom sets it on the sending domain",
	"mime-version":          "Mailroom writes the MIME structure",
	"dkim-signature":        "Mailroom signs the message with the domain's key",
	"return-path":           "the receiving server adds it from the envelope",
	"received":              "servers add it as the message travels",
	"list-unsubscribe":      `Mailroom sets it for mail with category "marketing" (RFC 8058)`,
	"list-unsubscribe-post": `Mailroom sets it for mail with category "marketing" (RFC 8058)`,
	// Headers that receivers read as written by a server they trust: a
	// sender who could set them could forge the receiver's own verdicts.
	"authentication-results": "the receiving server writes its verdict there (RFC 8601 §5); a sender must not",
	"received-spf":           "the receiving server writes its SPF verdict there (RFC 7208 §9.1); a sender must not",
	"delivered-to":           "the receiving server adds it on delivery; a sender must not",
}

// reservedHeaderPrefixes are families of headers that are refused as
// reservedHeaders are, by lower-case prefix, with the reason.
var reservedHeaderPrefixes = []struct{ prefix, msg string }{
	{"content-", "is set by Mailroom, which writes the MIME structure; Content-* headers cannot be given here"},
	{"arc-", "cannot be given here: ARC-* headers are the trust chain of forwarding servers (RFC 8617 §4), a sender must not write them"},
	{"resent-", "cannot be given here: Resent-* headers record a resending by a mailbox's owner (RFC 5322 §3.6.6), not a first sending"},
}

// validateHeaders checks the extra headers and returns them sorted by
// name, case-insensitively, so that the same request always gives the
// same message. Problems are reported on the field "headers", naming the
// header in the message.
func validateHeaders(v *Validator, headers map[string]string) []Header {
	if len(headers) > MaxHeaders {
		v.Add("headers", "has %d headers; at most %d are allowed per message", len(headers), MaxHeaders)
		return nil
	}
	names := make([]string, 0, len(headers))
	size := 0
	for name, value := range headers {
		names = append(names, name)
		size += len(name) + len(value)
	}
	if size > MaxHeaderBytes {
		v.Add("headers", "names and values add up to %d octets; at most %d (16 KiB) are allowed per message", size, MaxHeaderBytes)
		return nil
	}
	sort.Slice(names, func(i, j int) bool {
		a, b := strings.ToLower(names[i]), strings.ToLower(names[j])
		if a != b {
			return a < b
		}
		return names[i] < names[j]
	})
	var out []Header
	for i, name := range names {
		value := headers[name]
		if msg := checkHeaderName(name); msg != "" {
			v.Add("headers", "%q: %s", name, msg)
			continue
		}
		if i > 0 && strings.EqualFold(names[i-1], name) {
			v.Add("headers", "%q is given twice (%q and %q); header names are case-insensitive", name, names[i-1], name)
			continue
		}
		if msg := checkHeaderValue(name, value); msg != "" {
			v.Add("headers", "%q: the value %s", name, msg)
			continue
		}
		out = append(out, Header{Name: name, Value: value})
	}
	return out
}

// checkHeaderName applies RFC 5322 §3.6.8 (field names are printable ASCII
// other than colon) and refuses the headers Mailroom writes itself.
func checkHeaderName(name string) string {
	if name == "" {
		return "a header name must not be empty"
	}
	if len(name) > maxHeaderNameLength {
		return fmt.Sprintf("the name has %d characters; at most %d are allowed", len(name), maxHeaderNameLength)
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		switch {
		case c == '\r' || c == '\n':
			return "the name must not contain line breaks (CR or LF): they would end the header and let the rest be read as new headers"
		case c == ':':
			return `the name must not contain ":"; give the value separately, as "name": "value"`
		case c < 33 || c > 126:
			return "the name may contain only printable ASCII characters other than \":\", without spaces (RFC 5322 §3.6.8)"
		}
	}
	lower := strings.ToLower(name)
	if why, ok := reservedHeaders[lower]; ok {
		return "cannot be given here: " + why
	}
	for _, r := range reservedHeaderPrefixes {
		if strings.HasPrefix(lower, r.prefix) {
			return r.msg
		}
	}
	return ""
}

// checkHeaderValue refuses line breaks (header injection), NUL and other
// control characters but tab, and fields longer than an RFC 5322 line:
// "Name: value" must fit in 998 octets, so that a value without spaces,
// which cannot be folded, is never split.
func checkHeaderValue(name, value string) string {
	if limit := maxHeaderValueLength - len(name) - len(": "); len(value) > limit {
		return fmt.Sprintf("has %d octets; with its name, at most %d are allowed", len(value), limit)
	}
	return checkHeaderText(value)
}
