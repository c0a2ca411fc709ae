package submission_test

import (
	"strings"
	"testing"
	"time"

	"github.com/mailroom/mailroom/smtpserver/smtpservertest"
	"github.com/mailroom/mailroom/submission"
)

// TestFailedLoginsAreRateLimitedPerAddress: five failures, then one each
// ten seconds; an address over its budget is told 421 and cut, even with
// the right key, while another address may still try.
func TestFailedLoginsAreRateLimitedPerAddress(t *testing.T) {
	ts := startServer(t)

	c := smtpservertest.DialFrom(t, ts.addr, "127.0.0.1")
	c.StartTLS(ts.client)
	for i := range submission.DefaultAuthFailureBurst {
		authPlain(c, "mailroom_guess_"+strings.Repeat("x", i))
		c.Expect("535 5.7.8 ")
	}
	authPlain(c, "mailroom_guess_6")
	if line := c.Expect("421 "); !strings.HasPrefix(line, "421 4.7.0 ") {
		t.Errorf("over the budget: %q", line)
	}
	if _, rest, err := c.ClosedWithin(10 * time.Second); err != nil && !smtpservertest.IsReset(err) {
		t.Errorf("connection not closed after the 421: %v (%q)", err, rest)
	}

	// A new connection from that address: refused before its key is
	// looked at, the right key too, so that it cannot be told.
	calls := ts.h.authCalls()
	c = smtpservertest.DialFrom(t, ts.addr, "127.0.0.1")
	c.StartTLS(ts.client)
	authPlain(c, goodKey)
	c.Expect("421 4.7.0 ")
	if n := ts.h.authCalls() - calls; n != 0 {
		t.Errorf("Authenticate called %d times over the budget", n)
	}

	// Another address still may.
	o := smtpservertest.DialFrom(t, ts.addr, "127.0.0.2")
	o.StartTLS(ts.client)
	authPlain(o, "mailroom_guess_other")
	o.Expect("535 5.7.8 ")
	authPlain(o, goodKey)
	o.Expect("235 ")

	// Ten seconds later, one more try.
	ts.clock.Advance(10 * time.Second)
	c = smtpservertest.DialFrom(t, ts.addr, "127.0.0.1")
	c.StartTLS(ts.client)
	authPlain(c, "mailroom_guess_7")
	c.Expect("535 5.7.8 ")
	authPlain(c, goodKey)
	c.Expect("421 4.7.0 ")
	ts.clock.Advance(10 * time.Second)
	c = smtpservertest.DialFrom(t, ts.addr, "127.0.0.1")
	c.StartTLS(ts.client)
	authPlain(c, goodKey)
	c.Expect("235 ")

	if n := ts.outcome(submission.OutcomeAuthLimited); n != 3 {
		t.Errorf("auth_limited = %d, want 3", n)
	}
}

// TestSuccessfulLoginsAreNotLimited: logging in, however often and from
// however many connections at once, costs nothing of the budget.
func TestSuccessfulLoginsAreNotLimited(t *testing.T) {
	ts := startServer(t)
	var conns []*smtpservertest.Conn
	for range 10 {
		c := smtpservertest.DialFrom(t, ts.addr, "127.0.0.3")
		c.StartTLS(ts.client)
		conns = append(conns, c)
	}
	// All AUTHs in flight together, then all replies.
	for range 3 {
		for _, c := range conns {
			authPlain(c, goodKey)
		}
		for _, c := range conns {
			c.Expect("235 ")
			c.Send("RSET\r\n")
			c.Expect("250 ")
		}
		for i, c := range conns {
			// Log in again on a fresh TLS session: STARTTLS ends a
			// login, so reconnect.
			_ = c.Close()
			conns[i] = smtpservertest.DialFrom(t, ts.addr, "127.0.0.3")
			conns[i].StartTLS(ts.client)
		}
	}
	if n := ts.outcome(submission.OutcomeAuthLimited); n != 0 {
		t.Errorf("auth_limited = %d", n)
	}
}
