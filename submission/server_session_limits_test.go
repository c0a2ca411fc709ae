package submission_test

import (
	"strings"
	"testing"

	"github.com/emersion/go-sasl"

	"github.com/mailroom/mailroom"
	"github.com/mailroom/mailroom/smtpserver"
	"github.com/mailroom/mailroom/smtpserver/smtpservertest"
	"github.com/mailroom/mailroom/submission"
)

const (
	junk421   = "421 4.7.0 smtp.test too many commands that do nothing, closing connection"
	errors421 = "421 4.7.0 smtp.test too many errors, closing connection"
)

// TestSessionOfNOOPsIsClosed: with the default limits, the NOOP past
// DefaultMaxJunkCommands is followed by 421 4.7.0 and the end of the
// connection: in clear on the submission port, logged in under STARTTLS,
// and on the implicit-TLS port from its first command.
func TestSessionOfNOOPsIsClosed(t *testing.T) {
	ts := startServer(t)

	c := smtpservertest.Dial(t, ts.addr)
	c.Expect("220 ")
	c.Repeat("NOOP\r\n", "250 ", smtpserver.DefaultMaxJunkCommands+1)
	c.ExpectLast(junk421)

	c = smtpservertest.Dial(t, ts.addr)
	c.StartTLS(ts.client)
	authPlain(c, goodKey)
	c.Expect("235 ")
	c.Repeat("NOOP\r\n", "250 ", smtpserver.DefaultMaxJunkCommands+1)
	c.ExpectLast(junk421)

	c = smtpservertest.Dial(t, ts.tlsAddr)
	c.Handshake(ts.client)
	c.Expect("220 ")
	c.Repeat("NOOP\r\n", "250 ", smtpserver.DefaultMaxJunkCommands+1)
	c.ExpectLast(junk421)

	if n := ts.outcome(submission.OutcomeClosedJunk); n != 3 {
		t.Errorf("closed_junk = %d, want 3", n)
	}
}

// TestSessionOfErrorsIsClosed: refused commands past DefaultMaxErrors end
// the session: MAIL before AUTH in clear, and failed logins under TLS
// from a client the login limit lets through.
func TestSessionOfErrorsIsClosed(t *testing.T) {
	ts := startServer(t, func(s *submission.Server) { s.AuthFailureBurst = 1000 })

	c := smtpservertest.Dial(t, ts.addr)
	c.Expect("220 ")
	c.Send("EHLO client.test\r\n")
	c.Expect("250 ")
	c.Repeat("MAIL FROM:<app@example.com>\r\n", "530 5.7.0 ", smtpserver.DefaultMaxErrors+1)
	c.ExpectLast(errors421)

	c = smtpservertest.Dial(t, ts.addr)
	c.StartTLS(ts.client)
	for i := range smtpserver.DefaultMaxErrors + 1 {
		authPlain(c, "mailroom_guess_"+strings.Repeat("x", i))
		c.Expect("535 5.7.8 ")
	}
	c.ExpectLast(errors421)

	if n := ts.outcome(submission.OutcomeClosedErrors); n != 2 {
		t.Errorf("closed_errors = %d, want 2", n)
	}
}

// TestNormalSessionWithSomeRSETsAndErrors: a client that sends many
// messages over one connection, with a RSET and a NOOP before each, a
// MAIL refused for the rate limit and a message refused now and then, is
// never cut.
func TestNormalSessionWithSomeRSETsAndErrors(t *testing.T) {
	ts := startServer(t)
	c := ts.dialTLS(t, "")
	if err := c.Auth(sasl.NewLoginClient("anyone", goodKey)); err != nil {
		t.Fatalf("AUTH LOGIN: %v", err)
	}
	const rounds = 3 * smtpserver.DefaultMaxErrors
	for i := range rounds {
		if err := c.Reset(); err != nil {
			t.Fatalf("RSET %d: %v", i, err)
		}
		if err := c.Noop(); err != nil {
			t.Fatalf("NOOP %d: %v", i, err)
		}
		ts.h.set(func(h *fakeHandler) { h.deny = true })
		if err := c.Mail("app@example.com", nil); smtpservertest.Code(err) != 451 {
			t.Fatalf("MAIL %d over the rate: %v, want 451", i, err)
		}
		ts.h.set(func(h *fakeHandler) { h.deny = false })
		if i%2 == 0 {
			ts.h.set(func(h *fakeHandler) { h.submitErr = mailroom.Errorf(mailroom.ECodeValidation, "Refused.") })
			if _, err := send(c, "app@example.com", []string{"ann@example.net"}, message("refused", "x\r\n")); smtpservertest.Code(err) != 550 {
				t.Fatalf("message %d: %v, want 550", i, err)
			}
			ts.h.set(func(h *fakeHandler) { h.submitErr = nil })
		}
		if text, err := send(c, "app@example.com", []string{"ann@example.net"}, message("ok", "x\r\n")); err != nil {
			t.Fatalf("message %d: %q %v", i, text, err)
		}
	}
	if err := c.Quit(); err != nil {
		t.Fatal(err)
	}
	if n := len(ts.h.messages()); n != rounds {
		t.Errorf("%d messages taken, want %d", n, rounds)
	}
	if strings.Contains(ts.log.String(), "session closed") {
		t.Errorf("a session was closed:\n%s", ts.log)
	}
}
