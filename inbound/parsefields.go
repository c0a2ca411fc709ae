package inbound

import (
	"bytes"
	"strconv"
	"strings"
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
// blocks. It is written here rather than read with textproto.ReadHeader
// so that it can be lenient as reports need: a line that is not a field
// is skipped rather than ending the part, a line of spaces separates
// blocks, and extra blank lines are allowed. Values are cut to
// maxFieldValue bytes.
func parseFieldBlocks(b []byte, maxBlocks int) []fieldBlock {
	var blocks []fieldBlock
	var cur fieldBlock
	last := -1 // index in cur of the field a continuation line extends; -1 none
	flush := func() {
		if len(cur) > 0 {
			blocks = append(blocks, cur)
		}
		cur, last = nil, -1
	}
	for len(b) > 0 && len(blocks) < maxBlocks {
		var line []byte
		if i := bytes.IndexByte(b, '\n'); i >= 0 {
			line, b = b[:i], b[i+1:]
		} else {
			line, b = b, nil
		}
		line = bytes.TrimRight(line, "\r")
		trimmed := bytes.TrimSpace(line)
		switch {
		case len(trimmed) == 0:
			flush()
		case line[0] == ' ' || line[0] == '\t':
			// RFC 5322 §2.2.3 folding.
			if last >= 0 {
				v := cur[last].value
				if len(v) < maxFieldValue {
					v = append(v, ' ')
					v = append(v, trimmed[:min(len(trimmed), maxFieldValue-len(v))]...)
					cur[last].value = v
				}
			}
		default:
			name, value, ok := bytes.Cut(line, []byte(":"))
			name = bytes.TrimRight(name, " \t") // "Status : 5.1.1" is seen
			if !ok || !isFieldName(name) {
				last = -1
				continue
			}
			value = bytes.TrimSpace(value)
			value = value[:min(len(value), maxFieldValue)]
			cur = append(cur, field{name: strings.ToLower(string(name)), value: bytes.Clone(value)})
			last = len(cur) - 1
		}
	}
	if len(blocks) < maxBlocks {
		flush()
	}
	return blocks
}

// isFieldName reports a field name of RFC 5322 §3.6.8: printable ASCII
// but the colon.
func isFieldName(b []byte) bool {
	if len(b) == 0 {
		return false
	}
	for _, c := range b {
		if c < 33 || c > 126 || c == ':' {
			return false
		}
	}
	return true
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
