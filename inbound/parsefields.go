package inbound

import (
	"bufio"
	"bytes"
	"strconv"
	"strings"

	"github.com/emersion/go-message/textproto"
)

// field is one "Name: value" of a report's machine-readable part, its
// name lower-case and its folded lines joined by a space.
type field struct {
	name  string
	value []byte
}

// fieldBlock is a group of fields between blank lines.
type fieldBlock []field

// get is the value of the block's first field called name (lower-case),
// or "".
func (b fieldBlock) get(name string) string {
	for _, f := range b {
		if f.name == name {
			return string(f.value)
		}
	}
	return ""
}

// parseFieldBlocks reads the body of a message/delivery-status (RFC 3464
// §2.1: a per-message block, then per-recipient blocks, each separated by
// a blank line) or message/feedback-report part into at most maxBlocks
// blocks, with go-message's textproto, leniently as reports need: a line
// that is not a field is skipped rather than ending the part (ReadHeader
// stops at it, having read it, and the next call goes on after it), a
// line of spaces separates blocks, and extra blank lines are allowed.
// Values are unfolded and cut to maxFieldValue bytes.
func parseFieldBlocks(b []byte, maxBlocks int) []fieldBlock {
	r := bufio.NewReader(bytes.NewReader(blankWhitespaceLines(b)))
	var blocks []fieldBlock
	var cur fieldBlock
	for len(blocks) < maxBlocks {
		h, err := textproto.ReadHeader(r)
		for fs := h.Fields(); fs.Next(); {
			value := bytes.TrimSpace([]byte(fs.Value()))
			value = value[:min(len(value), maxFieldValue)]
			cur = append(cur, field{name: strings.ToLower(fs.Key()), value: value})
		}
		if err != nil {
			continue // a line that is not a field, skipped
		}
		// A blank line, or the end.
		if len(cur) > 0 {
			blocks = append(blocks, cur)
			cur = nil
		}
		if _, err := r.Peek(1); err != nil {
			break
		}
	}
	return blocks
}

// blankWhitespaceLines empties the lines that hold only whitespace:
// textproto would read one as the continuation of the field above, and
// some MTAs put one between a report's blocks.
func blankWhitespaceLines(b []byte) []byte {
	out := make([]byte, 0, len(b))
	for line := range bytes.Lines(b) {
		if len(bytes.TrimSpace(line)) == 0 {
			line = []byte("\n")
		}
		out = append(out, line...)
	}
	return out
}

// stripType removes the type of a typed value (RFC 3464 §2.1.2:
// "rfc822; ann@example.net", "smtp; 550 …", "dns; mx.example.net"),
// when what precedes the first ";" is a type, an atom, and not the start
// of the text.
func stripType(v string) string {
	t, rest, ok := strings.Cut(v, ";")
	if !ok {
		return strings.TrimSpace(v)
	}
	t = strings.TrimSpace(t)
	if t == "" || strings.ContainsAny(t, " \t<>@\"()[],") {
		return strings.TrimSpace(v)
	}
	return strings.TrimSpace(rest)
}

// reportAddress is the address of a typed address field (Final-Recipient,
// Original-Recipient; RFC 3464 §2.3.1, RFC 6533 §3), as written, without
// its type and angle brackets. A utf-8 address's \x{HEX} escapes (RFC
// 6533 §3, embedded-unicode-char) are decoded.
func reportAddress(v string) string {
	typ, _, _ := strings.Cut(v, ";")
	a := stripType(v)
	if strings.HasPrefix(a, "<") {
		a = strings.TrimPrefix(a, "<")
		a, _, _ = strings.Cut(a, ">")
	}
	if strings.EqualFold(strings.TrimSpace(typ), "utf-8") {
		a = unescapeUnicode(a)
	}
	return cleanValue(strings.TrimSpace(a))
}

// unescapeUnicode decodes the \x{HEX} escapes of RFC 6533 §3.
func unescapeUnicode(s string) string {
	if !strings.Contains(s, `\x{`) {
		return s
	}
	var sb strings.Builder
	for {
		i := strings.Index(s, `\x{`)
		if i < 0 {
			sb.WriteString(s)
			return sb.String()
		}
		sb.WriteString(s[:i])
		hex, after, ok := strings.Cut(s[i+3:], "}")
		n, err := strconv.ParseUint(hex, 16, 32)
		if !ok || err != nil || len(hex) > 6 || n > 0x10FFFF {
			sb.WriteString(`\x{`)
			s = s[i+3:]
			continue
		}
		sb.WriteRune(rune(n))
		s = after
	}
}

// messageID is a Message-ID field's msg-id (RFC 5322 §3.6.4) without its
// angle brackets, or "" when there is none.
func messageID(v string) string {
	v = strings.TrimSpace(v)
	if i := strings.IndexByte(v, '<'); i >= 0 {
		v = v[i+1:]
		if j := strings.IndexByte(v, '>'); j >= 0 {
			v = v[:j]
		}
	}
	v = strings.TrimSpace(v)
	if strings.ContainsAny(v, " \t\r\n<>") || len(v) > maxFieldValue {
		return ""
	}
	return cleanValue(v)
}
