package submission

import (
	"bufio"
	"bytes"
	"fmt"
	"strings"

	"github.com/emersion/go-message/textproto"

	"github.com/mailroom/mailroom"
	"github.com/mailroom/mailroom/compose"
)

// submittedHeader is a submitted message split at the end of its header:
// the client's fields as written (go-message's textproto keeps each
// field's bytes, folds included, which the DKIM signature covers), the
// fields the service adds below them, and the body, untouched.
type submittedHeader struct {
	fields textproto.Header
	added  []byte
	body   []byte
}

// splitSubmitted splits raw into its header's fields and its body, or
// says why it cannot. Line endings are made CRLF first where a client
// wrote a bare LF (RFC 5322 §2.3, RFC 5321 §2.3.8): that is what the
// message becomes on the wire anyway, so the signature must cover it.
func splitSubmitted(raw []byte) (*submittedHeader, string) {
	if len(raw) == 0 {
		return nil, "the message is empty"
	}
	raw = crlf(raw)
	var head []byte
	h := &submittedHeader{}
	switch end := bytes.Index(raw, []byte("\r\n\r\n")); {
	case bytes.HasPrefix(raw, []byte("\r\n")):
		h.body = raw[2:]
	case end >= 0:
		head, h.body = raw[:end+2], raw[end+4:]
	default:
		// A header and no body.
		head = raw
		if !bytes.HasSuffix(head, []byte("\r\n")) {
			head = append(head, "\r\n"...)
		}
	}
	if problem := checkFieldLines(head); problem != "" {
		return nil, problem
	}
	block := append(head[:len(head):len(head)], "\r\n"...)
	fields, err := textproto.ReadHeader(bufio.NewReader(bytes.NewReader(block)))
	if err != nil {
		// checkFieldLines refuses what ReadHeader would; this is a
		// backstop, in the same words.
		return nil, fmt.Sprintf("the message's header could not be read (%s); the header ends at the first empty line (RFC 5322 §2.1)",
			mailroom.Excerpt(err.Error(), mailroom.MaxQuoted))
	}
	h.fields = fields
	return h, ""
}

// checkFieldLines refuses a header line that is neither the start of a
// field, an RFC 5322 §3.6.8 name (printable US-ASCII but for the colon,
// no spaces: compose.IsFieldName, textproto's own check) and a colon, nor
// a continuation of one (§2.2.3: it starts
// with whitespace). textproto is lenient where the standard is not: it
// trims spaces before the colon and skips a field with no name, and a
// submission that a receiver would read otherwise must not be signed.
func checkFieldLines(head []byte) string {
	for i, line := range bytes.SplitAfter(head, []byte("\r\n")) {
		if len(line) == 0 || (i > 0 && (line[0] == ' ' || line[0] == '\t')) {
			continue
		}
		name, _, ok := bytes.Cut(line, []byte(":"))
		if !ok || !compose.IsFieldName(string(name)) {
			line = bytes.TrimSuffix(line, []byte("\r\n"))
			return fmt.Sprintf("the message's header has a line that is not a header field (%q); the header ends at the first empty line (RFC 5322 §2.1)",
				mailroom.Excerpt(string(line), mailroom.MaxQuoted))
		}
	}
	return ""
}

// values returns the unfolded values of the fields named name, in order:
// the text after the colon with its line breaks removed (RFC 5322
// §2.2.3), without the whitespace around it.
func (h *submittedHeader) values(name string) []string {
	var out []string
	for fs := h.fields.FieldsByKey(name); fs.Next(); {
		raw, err := fs.Raw()
		if err != nil {
			continue
		}
		_, v, _ := bytes.Cut(raw, []byte(":"))
		out = append(out, strings.Trim(string(bytes.ReplaceAll(v, []byte("\r\n"), nil)), " \t"))
	}
	return out
}

// remove removes every field named name.
func (h *submittedHeader) remove(name string) { h.fields.Del(name) }

// add appends a field, below the client's.
func (h *submittedHeader) add(name, value string) {
	h.added = append(h.added, name+": "+value+"\r\n"...)
}

// bytes writes the message: the client's fields, the added ones, the
// empty line, the body, which ends in CRLF (RFC 5321 §4.1.1.4).
func (h *submittedHeader) bytes() []byte {
	var out bytes.Buffer
	out.Grow(len(h.body) + len(h.added) + 1024)
	// WriteHeader ends with the empty line, which goes after the added
	// fields; writing to a bytes.Buffer cannot fail.
	_ = textproto.WriteHeader(&out, h.fields)
	out.Truncate(out.Len() - 2)
	out.Write(h.added)
	out.WriteString("\r\n")
	out.Write(h.body)
	if len(h.body) > 0 && !bytes.HasSuffix(h.body, []byte("\r\n")) {
		out.WriteString("\r\n")
	}
	return out.Bytes()
}
