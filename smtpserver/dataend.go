package smtpserver

import "errors"

// errBareLFEnd is MessageReader's error for a message cut at a line "."
// that a bare LF ends or follows (see dataEnd); CutOff answers it
// errBareLF.
var errBareLFEnd = errors.New("smtpserver: a line \".\" next to a bare LF in DATA")

// dataEnd follows go-smtp's DATA reader through the bytes it hands on, to
// find where a client may believe its message ended while go-smtp does
// not.
//
// RFC 5321 §4.1.1.4 ends the mail data at CRLF "." CRLF only, and forbids
// a server to take LF "." LF for it; §2.3.8 forbids a client to send a
// bare LF, yet many do. go-smtp ends at CRLF "." CRLF alone, so past
// "hello\n.\r\n", "hello\n.\n" or "hello\r\n.\n" it waits for more while
// the client, which has sent all it meant to, waits for the reply: the
// session hung until the read timeout (5 minutes). Taking such a line for
// the end, as Postfix does by default, would go against §4.1.1.4 and
// make where a message ends depend on which server reads it (how "SMTP
// smuggling" hides a second message in the first); so the message is
// refused at once instead (errBareLF), with the connection closed, since
// what the client sends next is out of step. A bare LF elsewhere is
// taken, as it was.
//
// One such end is not seen: go-smtp drops a dot that begins a line (after
// its CRLF), so "hello\r\n.\n" reaches this reader as "hello\r\n\n",
// the same bytes as a CRLF line followed by an empty bare-LF line, which
// sloppy clients write between header and body. Refusing those would
// refuse mail that is delivered today, so that end still waits for the
// read timeout. Each state is go-smtp's, as far as the bytes it hands on
// tell; for a CR it sees go-smtp's own (a CR after a CR is text, so
// "\r\r\n.\r\n" does not end the data either).
type dataEnd uint8

const (
	atLineStart      dataEnd = iota // at the start, or after go-smtp's CRLF
	afterCR                         // after a CR
	inLine                          // anything else
	afterBareLF                     // after an LF that go-smtp took as text
	afterBareLFDot                  // and then "."
	afterBareLFDotCR                // and then CR
)

// next moves past c, the next byte go-smtp handed on, and says false when
// c ends a line "." that a bare LF follows or ends.
func (s *dataEnd) next(c byte) bool {
	switch {
	case c == '\n' && (*s == afterBareLFDot || *s == afterBareLFDotCR):
		return false
	case c == '\n' && *s == afterCR:
		*s = atLineStart
	case c == '\n':
		*s = afterBareLF
	case c == '\r' && *s == afterBareLFDot:
		*s = afterBareLFDotCR
	case c == '\r' && *s != afterCR && *s != afterBareLFDotCR:
		*s = afterCR
	case c == '.' && *s == afterBareLF:
		*s = afterBareLFDot
	default:
		*s = inLine
	}
	return true
}
