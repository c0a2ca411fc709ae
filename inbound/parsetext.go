package inbound

import (
	"strings"
	"unicode/utf8"
)

// maxFieldValue bounds one value a report keeps (a Diagnostic-Code, an
// address): an SMTP reply line is at most 512 octets (RFC 5321
// §4.5.3.1.5), a multiline one is a few of them.
const maxFieldValue = 1024

// decodeText turns the body of a text part, in its declared charset,
// into clean UTF-8. go-message has decoded UTF-8 and US-ASCII (by leaving
// them as they are); a body that is valid UTF-8 is taken as it is. Else a
// charset of the Latin-1 family, US-ASCII among them, is decoded as
// Windows-1252, as the WHATWG Encoding Standard has browsers do: Exchange
// writes non-breaking spaces (=A0) in its us-ascii NDRs. Any other charset
// keeps what is valid UTF-8 and replaces the rest. (Registering
// go-message/charset would decode them all, but it sets the reader of
// every user of go-message in the binary, for text that is only an
// event's detail.)
func decodeText(b []byte, charset string) string {
	if utf8.Valid(b) {
		return cleanText(string(b))
	}
	switch strings.ToLower(strings.TrimSpace(charset)) {
	case "", "us-ascii", "ascii", "iso-8859-1", "iso_8859-1", "iso8859-1", "latin1", "l1", "cp819", "windows-1252", "cp1252", "x-cp1252":
		return cleanText(decodeCP1252(b))
	}
	return cleanText(string(b))
}

// cp1252 is what Windows-1252 puts at 0x80..0x9F, where Latin-1 has C1
// controls (0 where it has nothing).
var cp1252 = [32]rune{
	'€', 0, '‚', 'ƒ', '„', '…', '†', '‡', 'ˆ', '‰', 'Š', '‹', 'Œ', 0, 'Ž', 0,
	0, '‘', '’', '“', '”', '•', '–', '—', '˜', '™', 'š', '›', 'œ', 0, 'ž', 'Ÿ',
}

// decodeCP1252 decodes Windows-1252: Latin-1, each byte its code point,
// but for the 0x80..0x9F range.
func decodeCP1252(b []byte) string {
	var sb strings.Builder
	sb.Grow(len(b) * 2)
	for _, c := range b {
		r := rune(c)
		if c >= 0x80 && c < 0xA0 {
			r = cp1252[c-0x80]
			if r == 0 {
				r = utf8.RuneError
			}
		}
		sb.WriteRune(r)
	}
	return sb.String()
}

// cleanText makes text fit to keep: valid UTF-8, lines ending in LF, no
// control characters but LF and tab (a NUL is refused by PostgreSQL's
// text, and is nobody's text), no blank margins.
func cleanText(s string) string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	s = strings.ReplaceAll(s, "\r\n", "\n")
	s = strings.Map(func(r rune) rune {
		switch {
		case r == '\r':
			return '\n'
		case r == '\n' || r == '\t':
			return r
		case r < 0x20 || r == 0x7F || (r >= 0x80 && r < 0xA0):
			return -1
		}
		return r
	}, s)
	return strings.TrimSpace(s)
}

// cleanValue makes one header-like value fit to keep: valid UTF-8 on one
// line, spaces for controls, at most maxFieldValue bytes.
func cleanValue(s string) string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	s = strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7F || (r >= 0x80 && r < 0xA0) {
			return ' '
		}
		return r
	}, s)
	return cutText(strings.TrimSpace(s), maxFieldValue)
}

// cutText cuts s to at most n bytes at a character boundary.
func cutText(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}
