package smtp

import (
	"testing"

	"github.com/mailroom/mailroom"
	"github.com/mailroom/mailroom/dns/dnstest"
	"github.com/mailroom/mailroom/smtp/smtptest"
)

func TestReplyParsing(t *testing.T) {
	for _, tc := range []struct {
		code     int
		lines    []string
		enhanced string
		str      string
	}{
		// Enhanced code on every line, as Postfix and Gmail send it.
		{550, []string{"5.1.1 The email account that you tried to reach does not exist.", "5.1.1 Please check the address."}, "5.1.1",
			"550 5.1.1 The email account that you tried to reach does not exist. Please check the address."},
		// Only on the last line, as go-smtp sends it.
		{451, []string{"Try again", "4.3.0 later"}, "4.3.0", "451 4.3.0 Try again later"},
		// None at all.
		{250, []string{"Ok"}, "", "250 Ok"},
		// A leading number that is not an enhanced code, or one of the
		// wrong class, stays in the text.
		{550, []string{"2.0.0 odd"}, "", "550 2.0.0 odd"},
		{550, []string{"5.1.1000 too long"}, "", "550 5.1.1000 too long"},
		{250, []string{""}, "", "250"},
	} {
		r := newReply(tc.code, tc.lines)
		if r.Enhanced != tc.enhanced || r.String() != tc.str {
			t.Errorf("newReply(%d, %q) = %q %q, want %q %q", tc.code, tc.lines, r.Enhanced, r.String(), tc.enhanced, tc.str)
		}
	}
}

func TestDirectKeepsMultiLineRejection(t *testing.T) {
	mx := smtptest.Start(t)
	dnsSrv := dnstest.Start(t)
	publishMX(dnsSrv, "example.test", 10, "mx.example.test", "127.0.0.1")
	mx.Reply("gone@example.test", 550, "5.1.1", "The account does not exist.\nPlease check the address.")
	d := newDirect(t, dnsSrv, mx.Port())

	res := deliver(t, d, delivery("example.test", "gone@example.test"))
	want(t, res[0], mailroom.Bounced, 550, "5.1.1", "550 5.1.1 The account does not exist. Please check the address.")
}
