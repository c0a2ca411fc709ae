package smtp

import (
	"strconv"
	"strings"
)

// envelope is what MAIL and RCPT will carry: the MAIL parameters, and the
// recipients that may be sent a RCPT at all.
type envelope struct {
	params string
	rcpts  []int
}

// envelope checks the delivery against what the server announced and
// settles what can never go through this way: an address that would break
// the command line, a non-ASCII address to a server without SMTPUTF8, a
// message larger than the server takes. It returns false when no recipient
// is left to try.
func (t *transaction) envelope() (envelope, bool) {
	c, d := t.c, t.d
	if strings.ContainsFunc(d.MailFrom, isBadAddressRune) {
		t.settleRest(local(501, enhBadSender, "invalid envelope sender %q", d.MailFrom))
		return envelope{}, false
	}
	_, smtputf8 := c.ext["SMTPUTF8"]
	if !isASCII(d.MailFrom) && !smtputf8 {
		// RFC 6531 §3.2: without SMTPUTF8 a non-ASCII address cannot be
		// sent, and a downgrade of the sender is not ours to invent.
		t.settleRest(local(553, enhNonASCII, "%s does not support SMTPUTF8, which the sender address needs", c.host))
		return envelope{}, false
	}
	// RFC 1870 §4: a message larger than the server's fixed maximum
	// would be refused with 552, so it is not sent at all.
	if max, err := strconv.Atoi(c.ext["SIZE"]); err == nil && max > 0 && len(d.Data) > max {
		t.settleRest(local(552, enhTooBig, "message of %d bytes exceeds the %d-byte maximum of %s", len(d.Data), max, c.host))
		return envelope{}, false
	}

	env := envelope{}
	utf8 := !isASCII(d.MailFrom)
	for i, rcpt := range d.Recipients {
		switch {
		case rcpt == "" || strings.ContainsFunc(rcpt, isBadAddressRune):
			t.settle(i, local(553, enhBadRecipient, "invalid recipient address %q", rcpt))
		case !isASCII(rcpt) && !smtputf8:
			t.settle(i, local(553, enhNonASCII, "%s does not support SMTPUTF8, which this recipient address needs", c.host))
		default:
			utf8 = utf8 || !isASCII(rcpt)
			env.rcpts = append(env.rcpts, i)
		}
	}
	if len(env.rcpts) == 0 {
		return envelope{}, false
	}

	var p strings.Builder
	if _, ok := c.ext["SIZE"]; ok {
		// RFC 1870 §3: declare the size so that the server can refuse
		// before the data is sent.
		p.WriteString(" SIZE=" + strconv.Itoa(len(d.Data)))
	}
	if _, ok := c.ext["8BITMIME"]; ok && !isASCII(d.Data) {
		p.WriteString(" BODY=8BITMIME") // RFC 6152 §2
	}
	if utf8 {
		p.WriteString(" SMTPUTF8") // RFC 6531 §3.4
	}
	if t.requireTLS {
		// RFC 8689 §4.2.1: the receiver must then relay it only as
		// REQUIRETLS allows. The session was checked to offer it.
		p.WriteString(" REQUIRETLS")
	}
	env.params = p.String()
	return env, true
}

// isBadAddressRune reports the characters that cannot appear in a path as
// we send it: controls, which would end or corrupt the command line, and
// the angle brackets that delimit it (RFC 5321 §4.1.2).
func isBadAddressRune(r rune) bool {
	return r < 0x20 || r == 0x7f || r == '<' || r == '>'
}

func isASCII[T string | []byte](s T) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return false
		}
	}
	return true
}
