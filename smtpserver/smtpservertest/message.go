package smtpservertest

import (
	"bytes"
	"strings"
)

// MessageOfSize is a message of exactly n bytes, as a server counts them,
// header (its fields and the blank line) and then lines of "a": CRLF line
// ends, no line beginning with a dot.
func MessageOfSize(header string, n int) []byte {
	var b bytes.Buffer
	b.WriteString(header)
	for rest := n - b.Len(); rest > 0; rest = n - b.Len() {
		k := min(76, rest-2)
		if rest-(k+2) == 1 {
			k--
		}
		b.WriteString(strings.Repeat("a", k) + "\r\n")
	}
	if b.Len() != n {
		panic("MessageOfSize: wrong size")
	}
	return b.Bytes()
}
