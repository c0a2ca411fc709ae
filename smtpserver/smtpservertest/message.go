package smtpservertest

import (
	"bytes"
	"strings"
	"time"
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

// BareLFEnds are messages, by name, whose client writes a line "." next
// to a bare LF as their end (RFC 5321 §4.1.1.4 has only CRLF "." CRLF)
// and then waits for the reply: each is sent after DATA's 354.
var BareLFEnds = map[string]string{
	"LF.CRLF": "Subject: lf\r\n\r\nhello\n.\r\n",
	"LF.LF":   "Subject: lf\r\n\r\nhello\n.\n",
}

// ExpectBareLFRefused sends message, one of BareLFEnds, on c after DATA's
// 354, and fails unless the server answers it 500 5.5.2 and closes the
// connection within 5 seconds: at once, not at its read timeout.
func (c *Conn) ExpectBareLFRefused(message string) {
	c.t.Helper()
	c.Send(message)
	_, rest, err := c.ClosedWithin(5 * time.Second)
	if err != nil {
		c.t.Fatalf("no answer to a message ended by %q: %v (server said %q)", message[len(message)-6:], err, rest)
	}
	if !strings.HasPrefix(rest, "500 5.5.2 ") || strings.Count(rest, "\n") != 1 {
		c.t.Errorf("server said %q, want one 500 5.5.2 line", rest)
	}
}
