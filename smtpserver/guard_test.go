package smtpserver_test

import (
	"strings"
	"testing"
	"time"

	"github.com/mailroom/mailroom/poll"
	"github.com/mailroom/mailroom/smtpserver"
	"github.com/mailroom/mailroom/smtpserver/smtpservertest"
)

const (
	junk421   = "421 4.7.0 mx.test too many commands that do nothing, closing connection"
	errors421 = "421 4.7.0 mx.test too many errors, closing connection"
)

// TestSessionOfNOOPsIsClosed: with the default limits, a session of
// nothing but NOOPs, from before its EHLO, is answered 421 4.7.0 after
// the one past DefaultMaxJunkCommands, and closed; counted and logged.
func TestSessionOfNOOPsIsClosed(t *testing.T) {
	ts := start(t, smtpserver.Limits{})
	c := smtpservertest.Dial(t, ts.addr)
	c.Expect("220 ")
	c.Repeat("NOOP\r\n", "250 ", smtpserver.DefaultMaxJunkCommands+1)
	c.ExpectLast(junk421)
	if n := ts.outcomes.Count(smtpserver.OutcomeClosedJunk); n != 1 {
		t.Errorf("closed_junk = %d, want 1", n)
	}
	if !strings.Contains(ts.log.String(), `msg="test session closed: too many commands that do nothing"`) {
		t.Errorf("the end is not logged:\n%s", ts.log.String())
	}
}

// TestEveryCommandThatDoesNothingIsJunk: RSET, VRFY, HELP, EXPN, EHLO
// again, an unknown command and one out of sequence each count.
func TestEveryCommandThatDoesNothingIsJunk(t *testing.T) {
	ts := start(t, smtpserver.Limits{MaxJunkCommands: 7})
	c := smtpservertest.Dial(t, ts.addr)
	c.Expect("220 ")
	c.Send("EHLO client.test\r\n")
	c.Expect("250 ")
	for _, cmd := range []struct{ cmd, want string }{
		{"RSET", "250 "}, {"VRFY root", "252 "}, {"HELP", "502 "}, {"EXPN staff", "502 "},
		{"EHLO client.test", "250 "}, {"HELO client.test", "250 "}, {"XYZW", "500 "}, {"DATA", "502 "},
	} {
		c.Repeat(cmd.cmd+"\r\n", cmd.want, 1)
	}
	c.ExpectLast(junk421)
}

// TestSessionOfErrorsIsClosed: commands the listener refuses (here MAIL
// inside a transaction, 503) count against MaxErrors, not as junk.
func TestSessionOfErrorsIsClosed(t *testing.T) {
	ts := start(t, smtpserver.Limits{MaxJunkCommands: 1})
	c := smtpservertest.Dial(t, ts.addr)
	c.Expect("220 ")
	c.Send("EHLO client.test\r\n")
	c.Expect("250 ")
	c.Repeat("MAIL FROM:<a@client.test>\r\n", "250 ", 1)
	c.Repeat("MAIL FROM:<a@client.test>\r\n", "503 5.5.1 ", smtpserver.DefaultMaxErrors+1)
	c.ExpectLast(errors421)
	if n := ts.outcomes.Count(smtpserver.OutcomeClosedErrors); n != 1 {
		t.Errorf("closed_errors = %d, want 1", n)
	}
}

// TestCountsStartAgainAtEachMessage: a long session that sends mail, with
// a RSET and a NOOP and an error before each message, never meets the
// limits; the messages in BDAT chunks count as no junk either.
func TestCountsStartAgainAtEachMessage(t *testing.T) {
	ts := start(t, smtpserver.Limits{MaxJunkCommands: 2, MaxErrors: 1})
	c := smtpservertest.Dial(t, ts.addr)
	c.Expect("220 ")
	c.Send("EHLO client.test\r\n")
	c.Expect("250 ")
	for i := range 10 {
		c.Repeat("RSET\r\n", "250 ", 1)
		c.Repeat("NOOP\r\n", "250 ", 1)
		c.Repeat("MAIL FROM:<a@client.test>\r\n", "250 ", 1)
		c.Repeat("MAIL FROM:<a@client.test>\r\n", "503 ", 1)
		c.Repeat("RCPT TO:<b@mx.test>\r\n", "250 ", 1)
		if i%2 == 0 {
			c.Repeat("DATA\r\n", "354 ", 1)
			c.Repeat("Subject: one\r\n\r\nbody\r\n.\r\n", "250 ", 1)
			continue
		}
		for range 4 {
			c.Repeat("BDAT 6\r\nchunk\n", "250 ", 1)
		}
		c.Repeat("BDAT 0 LAST\r\n", "250 ", 1)
	}
	c.Repeat("QUIT\r\n", "221 ", 1)
	for _, o := range []string{smtpserver.OutcomeClosedJunk, smtpserver.OutcomeClosedErrors} {
		if n := ts.outcomes.Count(o); n != 0 {
			t.Errorf("%s = %d, want 0", o, n)
		}
	}
}

// TestSessionPastItsTimeIsClosed: a busy session is ended at the first
// command after SessionTimeout.
func TestSessionPastItsTimeIsClosed(t *testing.T) {
	ts := start(t, smtpserver.Limits{SessionTimeout: 300 * time.Millisecond, MaxJunkCommands: 1 << 20})
	c := smtpservertest.Dial(t, ts.addr)
	c.Expect("220 ")
	var last string
	poll.Until(t, 10*time.Second, "the session goes on past its time", func() bool {
		c.Send("NOOP\r\n")
		line, err := c.Reply(10 * time.Second)
		if err != nil {
			t.Fatalf("NOOP: %v", err)
		}
		last = line
		return !strings.HasPrefix(line, "250 ")
	})
	if last != "421 4.7.0 mx.test session time limit reached, closing connection" {
		t.Fatalf("reply %q", last)
	}
	if _, rest, err := c.ClosedWithin(10 * time.Second); err != nil && !smtpservertest.IsReset(err) || rest != "" {
		t.Fatalf("not closed: %q %v", rest, err)
	}
	if n := ts.outcomes.Count(smtpserver.OutcomeClosedSessionTimeout); n != 1 {
		t.Errorf("closed_session_timeout = %d, want 1", n)
	}
}

// TestMessageUnderWayFinishesPastTheSessionTime: a message sent in BDAT
// chunks when the session's time runs out is taken, and the session ends
// after it.
func TestMessageUnderWayFinishesPastTheSessionTime(t *testing.T) {
	const timeout = 300 * time.Millisecond
	ts := start(t, smtpserver.Limits{SessionTimeout: timeout})
	c := smtpservertest.Dial(t, ts.addr)
	began := time.Now()
	c.Expect("220 ")
	c.Send("EHLO client.test\r\n")
	c.Expect("250 ")
	c.Repeat("MAIL FROM:<a@client.test>\r\n", "250 ", 1)
	c.Repeat("RCPT TO:<b@mx.test>\r\n", "250 ", 1)
	c.Repeat("BDAT 6\r\nchunk\n", "250 ", 1)
	poll.Until(t, 10*time.Second, "the session's time does not pass", func() bool { return time.Since(began) > 2*timeout })
	c.Repeat("BDAT 6\r\nchunk\n", "250 ", 1)
	c.Repeat("BDAT 0 LAST\r\n", "250 ", 1)
	c.ExpectLast("421 4.7.0 mx.test session time limit reached, closing connection")
}
