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
// other than colon) and refuses every field that is not a client's own
// (ClassifyHeaderField: the message's fields, which the request gives,
// the ones Mailroom or servers on the way add, the ones receivers trust).
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
	if kind, why := ClassifyHeaderField(name); kind != HeaderCustom {
		return "cannot be given here: " + why
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
