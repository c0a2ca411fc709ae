package compose

import (
	"mime"
	"strings"
	"unicode/utf8"
)

// looksEncoded reports whether s holds text that an RFC 2047 decoder could
// take for an encoded-word: "=?" with "?=" somewhere after it. RFC 2047
// §5 has decoders look for encoded-words only as whole words and never in
// quoted strings or parameters, but common ones (Go's mime.WordDecoder,
// go-message, many mail clients) find them anywhere. A client's subject
// "=?utf-8?q?x=0D=0AX-Injected:_yes?=" written as it is would be shown by
// those as two lines, the second looking like a header; so the test is as
// broad as the loosest decoder, and text that passes it is encoded.
func looksEncoded(s string) bool {
	i := strings.Index(s, "=?")
	return i >= 0 && strings.Contains(s[i+2:], "?=")
}

// encodeText encodes an unstructured field value (RFC 5322 §3.2.5), such
// as Subject or a client's extra header: as encoded-words when it is not
// ASCII (RFC 2047 §5(1)) or when it looks like one, so that a decoder gives
// the client's text back literally; other ASCII is left as it is.
func encodeText(s string) string {
	if looksEncoded(s) {
		return encodeWords(s)
	}
	return mime.QEncoding.Encode("utf-8", s)
}

// encodeParams returns params with every value that looks like an
// encoded-word written as encoded-words of its own text. RFC 2047 §5 does
// not allow them in parameters, but go-message and the common mail clients
// decode them in file names all the same; RFC 2231's filename* would not
// help, as go-message decodes encoded-words in its result too. A reader
// that follows the RFCs strictly shows the encoded form, which is odd but
// harmless; the loose ones show the name the client gave.
func encodeParams(params map[string]string) map[string]string {
	out := make(map[string]string, len(params))
	for k, v := range params {
		if looksEncoded(v) {
			v = encodeWords(v)
		}
		out[k] = v
	}
	return out
}

// maxWord is RFC 2047 §2's limit on the length of an encoded-word.
const maxWord = 75

// encodeWords writes all of s as RFC 2047 Q encoded-words in UTF-8, so
// that a decoder gives s back exactly, text that looks like an
// encoded-word included (§5: such text must itself be encoded). Only
// letters, digits and "!*+-/" are written as they are, the characters
// §5(3) allows in a phrase, so the result is valid in unstructured text, a
// display name and a quoted parameter alike. Each word is at most 75
// characters (§2) and holds whole characters (§5); the words are
// separated by a space, which decoders drop between encoded-words (§6.2),
// and where the field may fold.
//
// mime.QEncoding is not used for this: it leaves ASCII text as it is.
func encodeWords(s string) string {
	const prefix, suffix = "=?utf-8?q?", "?="
	var b strings.Builder
	word := 0 // length of the current word's encoded text, 0 before the first
	first := true
	for i := 0; i < len(s); {
		_, n := utf8.DecodeRuneInString(s[i:])
		enc := qChar(s[i : i+n])
		if first || len(prefix)+word+len(enc)+len(suffix) > maxWord {
			if !first {
				b.WriteString(suffix + " ")
			}
			b.WriteString(prefix)
			word, first = 0, false
		}
		b.WriteString(enc)
		word += len(enc)
		i += n
	}
	if first {
		return ""
	}
	b.WriteString(suffix)
	return b.String()
}

// qChar is the Q encoding (RFC 2047 §4.2) of one character's bytes, in the
// restricted form of §5(3).
func qChar(c string) string {
	if len(c) == 1 {
		switch b := c[0]; {
		case b == ' ':
			return "_"
		case 'a' <= b && b <= 'z', 'A' <= b && b <= 'Z', '0' <= b && b <= '9', strings.IndexByte("!*+-/", b) >= 0:
			return c
		}
	}
	const hex = "0123456789ABCDEF"
	out := make([]byte, 0, 3*len(c))
	for i := 0; i < len(c); i++ {
		out = append(out, '=', hex[c[i]>>4], hex[c[i]&0x0f])
	}
	return string(out)
}
