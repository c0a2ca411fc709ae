package submission_test

import (
	"strings"
	"testing"
	"time"

	"github.com/mailroom/mailroom/submission"
)

// TestFailedLoginsAreRateLimitedPerAddress: five failures, then one each
// ten seconds; an address over its budget is told 421 and cut, even with
// the right key, while another address may still try.
func TestFailedLoginsAreRateLimitedPerAddress(t *testing.T) {
	ts := startServer(t)

	c := dialRawFrom(t, ts.addr, "127.0.0.1")
	c.startTLS(ts.client)
	for i := range submission.DefaultAuthFailureBurst {
		c.authPlain("mailroom_guess_" + strings.Repeat("x", i))
		c.expect("535 5.7.8 ")
	}
	c.authPlain("mailroom_guess_6")
	if line := c.expect("421 "); !strings.HasPrefix(line, "421 4.7.0 ") {
		t.Errorf("over the budget: %q", line)
	}
	if _, rest, err := c.closedWithin(10 * time.Second); err != nil && !isReset(err) {
		t.Errorf("connection not closed after the 421: %v (%q)", err, rest)
	}

	// A new connection from that address: refused before its key is
	// looked at, the right key too, so that it cannot be told.
	calls := ts.h.authCalls()
	c = dialRawFrom(t, ts.addr, "127.0.0.1")
	c.startTLS(ts.client)
	c.authPlain(goodKey)
	c.expect("421 4.7.0 ")
	if n := ts.h.authCalls() - calls; n != 0 {
		t.Errorf("Authenticate called %d times over the budget", n)
	}

	// Another address still may.
	o := dialRawFrom(t, ts.addr, "127.0.0.2")
	o.startTLS(ts.client)
	o.authPlain("mailroom_guess_other")
	o.expect("535 5.7.8 ")
	o.authPlain(goodKey)
	o.expect("235 ")

	// Ten seconds later, one more try.
	ts.clock.Advance(10 * time.Second)
	c = dialRawFrom(t, ts.addr, "127.0.0.1")
	c.startTLS(ts.client)
	c.authPlain("mailroom_guess_7")
	c.expect("535 5.7.8 ")
	c.authPlain(goodKey)
	c.expect("421 4.7.0 ")
	ts.clock.Advance(10 * time.Second)
	c = dialRawFrom(t, ts.addr, "127.0.0.1")
	c.startTLS(ts.client)
	c.authPlain(goodKey)
	c.expect("235 ")

	if n := ts.outcome(submission.OutcomeAuthLimited); n != 3 {
		t.Errorf("auth_limited = %d, want 3", n)
	}
}

// TestSuccessfulLoginsAreNotLimited: logging in, however often and from
// however many connections at once, costs nothing of the budget.
func TestSuccessfulLoginsAreNotLimited(t *testing.T) {
	ts := startServer(t)
	var conns []*rawConn
	for range 10 {
		c := dialRawFrom(t, ts.addr, "127.0.0.3")
		c.startTLS(ts.client)
		conns = append(conns, c)
	}
	// All AUTHs in flight together, then all replies.
	for range 3 {
		for _, c := range conns {
			c.authPlain(goodKey)
		}
		for _, c := range conns {
			c.expect("235 ")
			c.send("RSET\r\n")
			c.expect("250 ")
		}
		for i, c := range conns {
			// Log in again on a fresh TLS session: STARTTLS ends a
			// login, so reconnect.
			_ = c.Close()
			conns[i] = dialRawFrom(t, ts.addr, "127.0.0.3")
			conns[i].startTLS(ts.client)
		}
	}
	if n := ts.outcome(submission.OutcomeAuthLimited); n != 0 {
		t.Errorf("auth_limited = %d", n)
	}
}
