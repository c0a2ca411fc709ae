package smtpserver

import (
	"strings"

	"github.com/mailroom/mailroom"
)

// PathAddress is the address of a MAIL or RCPT path as the client wrote
// it, in canonical form. go-smtp's parser takes the quotes off a quoted
// local part (RFC 5321 §4.1.2): RCPT TO:<"john doe"@example.com> reaches a
// session as `john doe@example.com`, which is no address, and
// `"a@b"@example.com` as `a@b@example.com`. The local part, everything
// before the last "@", is quoted again when it is not a dot-atom, with
// `"` and `\` escaped; a dot-atom, the null path "" and a path with no
// "@" are as they came.
func PathAddress(s string) string {
	at := strings.LastIndexByte(s, '@')
	if at <= 0 {
		return s
	}
	return mailroom.QuoteLocalPart(s[:at]) + s[at:]
}
