package compose

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/emersion/go-message"
)

// field is one header field, its name spelled as it is to be written.
type field struct{ name, value string }

// fields is a header in the order it is to be written.
type fields []field

func (fs *fields) add(name, value string) { *fs = append(*fs, field{name, value}) }

func (fs fields) has(name string) bool {
	for _, f := range fs {
		if strings.EqualFold(f.name, name) {
			return true
		}
	}
	return false
}

// header hands the fields, formatted, to go-message. Its textproto writes
// fields last-added first (so that a relay can prepend trace fields), so
// they are added in reverse.
func (fs fields) header() (message.Header, error) {
	var h message.Header
	for i := len(fs) - 1; i >= 0; i-- {
		raw, err := formatField(fs[i])
		if err != nil {
			return message.Header{}, err
		}
		h.AddRaw(raw)
	}
	return h, nil
}

const (
	foldAt  = 78  // RFC 5322 §2.1.1: lines SHOULD be no longer
	maxLine = 998 // RFC 5322 §2.1.1: lines MUST be no longer
)

// formatField writes f as "Name: value\r\n", folded (RFC 5322 §2.2.3) by
// putting CRLF before whitespace that is already there, so unfolding gives
// the value back exactly. Lines are at most 78 characters, except that the
// first word stays beside the name (a line holding only "Subject:" trips
// naive readers) and a longer word is not broken. That keeps RFC 2047's
// 75-character encoded-words on lines of their own, as §2 of it asks.
// A word too long for 998 octets is the one thing broken, at the cost of a
// space when unfolded; values the API accepts do not have one.
//
// go-message's own folding is not used: once a word does not fit its soft
// limit it falls back to 998 for the whole field, so a long non-ASCII
// subject becomes one line of 998 octets of encoded-words. It also writes
// names in Go's canonical case ("Message-Id"); here they are spelled as in
// the RFCs, or as the client spelled them.
//
// A CR or LF in the value is refused: it would end the field and start
// another, the classic header-injection hole.
func formatField(f field) ([]byte, error) {
	if !IsFieldName(f.name) {
		return nil, fmt.Errorf("invalid header name %q", f.name)
	}
	if strings.ContainsAny(f.value, "\r\n") {
		return nil, fmt.Errorf("header %s: value contains CR or LF", f.name)
	}
	var b []byte
	line := f.name + ":"
	for i, w := range words(" " + f.value) {
		blank := strings.TrimLeft(w, " \t") == ""
		if i > 0 && !blank && len(line)+len(w) > foldAt {
			b = append(append(b, line...), "\r\n"...)
			line = ""
		}
		line += w
		for len(line) > maxLine {
			cut := maxLine
			for cut > 1 && !utf8.RuneStart(line[cut]) {
				cut-- // never split a UTF-8 character (RFC 6532 local parts)
			}
			b = append(append(b, line[:cut]...), "\r\n"...)
			line = " " + line[cut:]
		}
	}
	return append(append(b, line...), "\r\n"...), nil
}

// words splits s before each run of spaces and tabs: the places a field
// may be folded. Each word but the first starts with its whitespace.
func words(s string) []string {
	var out []string
	start := 0
	for i := 1; i < len(s); i++ {
		if isWSP(s[i]) && !isWSP(s[i-1]) {
			out = append(out, s[start:i])
			start = i
		}
	}
	return append(out, s[start:])
}

func isWSP(c byte) bool { return c == ' ' || c == '\t' }
