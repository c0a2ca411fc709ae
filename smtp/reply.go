package smtp

import (
	"strconv"
	"strings"

	"github.com/mailroom/mailroom"
)

// reply is one SMTP reply (RFC 5321 §4.2): its code, and its text with the
// enhanced status code (RFC 3463) taken off the front when the server sent
// one, as servers announcing ENHANCEDSTATUSCODES do on every line (RFC 2034
// §4).
type reply struct {
	Code     int
	Enhanced string
	// Text is the reply's lines joined by spaces, so that a multi-line
	// rejection reads as one sentence in the email log.
	Text string
	// lines are the reply's text lines as sent, for EHLO.
	lines []string
}

// newReply builds a reply from its code and lines. Servers differ in where
// the enhanced code goes in a multi-line reply: every line (RFC 2034 §4),
// or only the last; the first one found is the reply's, and it is taken off
// every line that repeats it.
func newReply(code int, lines []string) reply {
	r := reply{Code: code, lines: lines}
	texts := make([]string, 0, len(lines))
	for _, line := range lines {
		enh, rest := splitEnhanced(code, line)
		if r.Enhanced == "" {
			r.Enhanced = enh
		}
		if enh != "" && enh == r.Enhanced {
			line = rest
		}
		if line != "" {
			texts = append(texts, line)
		}
	}
	r.Text = printable(strings.Join(texts, " "))
	return r
}

// printable makes reply text safe to store and show: RFC 5321 §4.2 allows
// only ASCII, but servers send Latin-1 and control bytes, which
// PostgreSQL refuses in a text column (an outcome that cannot be recorded
// would be delivered again and again). Invalid UTF-8 becomes U+FFFD and
// control characters become spaces.
func printable(s string) string {
	return strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f {
			return ' '
		}
		return r
	}, strings.ToValidUTF8(s, "\uFFFD"))
}

// splitEnhanced takes an enhanced status code off the front of line:
// class.subject.detail, one to three digits each (RFC 3463 §2), and a class
// that agrees with the reply code's first digit (RFC 2034 §4), so that
// text which merely starts with a number is left alone.
func splitEnhanced(code int, line string) (enhanced, rest string) {
	word, rest, _ := strings.Cut(line, " ")
	parts := strings.Split(word, ".")
	if len(parts) != 3 || word[0] != byte('0'+code/100) {
		return "", line
	}
	for i, p := range parts {
		max := 3
		if i == 0 {
			max = 1
		}
		if len(p) == 0 || len(p) > max || strings.Trim(p, "0123456789") != "" {
			return "", line
		}
	}
	return word, rest
}

// String is the reply as the server sent it, on one line: what the email
// log shows and what a receiver's queue id is found in.
func (r reply) String() string {
	var b strings.Builder
	b.WriteString(strconv.Itoa(r.Code))
	for _, s := range []string{r.Enhanced, r.Text} {
		if s != "" {
			b.WriteByte(' ')
			b.WriteString(s)
		}
	}
	return b.String()
}

// status is this reply as a verdict for the recipients it concerns
// (docs/design.md "How mail is delivered"): 2xx delivered, 5xx bounced, and everything else, 4xx or
// a code that makes no sense where it came, deferred.
func (r reply) status() status {
	st := status{Code: r.Code, Enhanced: r.Enhanced, Response: r.String(), Text: r.Text}
	switch r.Code / 100 {
	case 2:
		st.Outcome = mailroom.Delivered
	case 5:
		st.Outcome = mailroom.Bounced
	default:
		st.Outcome = mailroom.Deferred
	}
	return st
}

// refusal is the verdict of a reply other than the one a command needed to
// go on (354 to DATA): a 2xx there makes no sense, and a reply that makes no
// sense is unknown, so deferred, never delivered.
func (r reply) refusal() status {
	st := r.status()
	if st.Outcome == mailroom.Delivered {
		st.Outcome = mailroom.Deferred
	}
	return st
}

// closing reports whether the server is closing the session (RFC 5321
// §3.8): the connection cannot carry another transaction.
func (r reply) closing() bool { return r.Code == 421 }
