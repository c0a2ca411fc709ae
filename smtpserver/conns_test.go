package smtpserver_test

import (
	"strings"
	"testing"
	"time"

	"github.com/mailroom/mailroom/poll"
	"github.com/mailroom/mailroom/smtpserver"
	"github.com/mailroom/mailroom/smtpserver/smtpservertest"
)

// TestClientPastItsAddressCapIsRefused: a client holding MaxConnsPerIP
// connections is answered 421 on the next and that one is closed; another
// address is served meanwhile, and the client is served again once one of
// its connections goes.
func TestClientPastItsAddressCapIsRefused(t *testing.T) {
	ts := start(t, smtpserver.Limits{MaxConnsPerIP: 2, MaxConns: 10})
	first := smtpservertest.DialFrom(t, ts.addr, "127.0.0.1")
	first.Expect("220 ")
	smtpservertest.DialFrom(t, ts.addr, "127.0.0.1").Expect("220 ")

	over := smtpservertest.DialFrom(t, ts.addr, "127.0.0.1")
	if line := over.Expect("421 "); line != "421 4.7.0 mx.test too many connections from your address, try again later" {
		t.Errorf("refusal %q", line)
	}
	if _, rest, err := over.ClosedWithin(5 * time.Second); err != nil || rest != "" {
		t.Errorf("refused connection not closed after its 421: %q %v", rest, err)
	}
	if n := ts.outcomes.Count(smtpserver.OutcomeConnRefused); n != 1 {
		t.Errorf("conn_refused = %d, want 1", n)
	}
	if !strings.Contains(ts.log.String(), `msg="test connection refused"`) {
		t.Errorf("the refusal is not logged:\n%s", ts.log.String())
	}

	smtpservertest.DialFrom(t, ts.addr, "127.0.0.2").Expect("220 ")

	first.Send("QUIT\r\n")
	first.Expect("221 ")
	poll.Until(t, 10*time.Second, "the address is not served again after one of its connections closed", func() bool {
		line, err := smtpservertest.DialFrom(t, ts.addr, "127.0.0.1").Reply(5 * time.Second)
		return err == nil && strings.HasPrefix(line, "220 ")
	})
}

// TestServerPastItsOverallCapRefusesEveryone: MaxConns connections in all,
// from any addresses; the next, from a new address, is answered 421 and
// closed.
func TestServerPastItsOverallCapRefusesEveryone(t *testing.T) {
	ts := start(t, smtpserver.Limits{MaxConnsPerIP: 10, MaxConns: 2})
	smtpservertest.DialFrom(t, ts.addr, "127.0.0.1").Expect("220 ")
	smtpservertest.DialFrom(t, ts.addr, "127.0.0.2").Expect("220 ")

	over := smtpservertest.DialFrom(t, ts.addr, "127.0.0.3")
	if line := over.Expect("421 "); line != "421 4.7.0 mx.test too many connections, try again later" {
		t.Errorf("refusal %q", line)
	}
	if _, _, err := over.ClosedWithin(5 * time.Second); err != nil {
		t.Errorf("refused connection not closed: %v", err)
	}
}
