package inbound_test

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/mailroom/mailroom"
	"github.com/mailroom/mailroom/inbound"
	"github.com/mailroom/mailroom/smtpserver"
	"github.com/mailroom/mailroom/smtpserver/smtpservertest"
	"github.com/mailroom/mailroom/tlscert"
)

// TestServerClosesASessionOfNOOPs: the finding was 50,000 NOOPs in one
// session. With the default limits the one past DefaultMaxJunkCommands
// is followed by 421 4.7.0 and the end of the connection, in clear and
// under STARTTLS (where the 421 goes through TLS), and also when TLS
// began before any EHLO (go-smtp answers the 421 then).
func TestServerClosesASessionOfNOOPs(t *testing.T) {
	cert, _, err := tlscert.SelfSigned(t.TempDir(), "mx.test.example", time.Now())
	if err != nil {
		t.Fatal(err)
	}
	ts := startServer(t, func(s *inbound.Server) { s.TLS = tlscert.ServerConfig(cert) })
	roots := x509.NewCertPool()
	roots.AddCert(cert.Leaf)
	cfg := &tls.Config{RootCAs: roots, ServerName: "mx.test.example"}
	const want = "421 4.7.0 mx.test too many commands that do nothing, closing connection"

	c := smtpservertest.Dial(t, ts.addr)
	c.Expect("220 ")
	c.Send("EHLO sender.test\r\n")
	c.Expect("250 ")
	c.Repeat("NOOP\r\n", "250 ", smtpserver.DefaultMaxJunkCommands+1)
	c.ExpectLast(want)

	// STARTTLS and EHLO act; the NOOPs after them count from 0.
	c = smtpservertest.Dial(t, ts.addr)
	c.StartTLS(cfg)
	c.Repeat("NOOP\r\n", "250 ", smtpserver.DefaultMaxJunkCommands+1)
	c.ExpectLast(want)

	// TLS before any EHLO: STARTTLS counts as one, and go-smtp, which
	// alone holds the TLS connection then, says the 421.
	c = smtpservertest.Dial(t, ts.addr)
	c.Expect("220 ")
	c.Send("STARTTLS\r\n")
	c.Expect("220 ")
	c.Handshake(cfg)
	c.Repeat("NOOP\r\n", "250 ", smtpserver.DefaultMaxJunkCommands)
	c.Expect("421 4.4.0 ")
	if _, rest, err := c.ClosedWithin(10 * time.Second); err != nil || rest != "" {
		t.Fatalf("not closed: %q %v", rest, err)
	}

	if n := ts.outcome(inbound.OutcomeClosedJunk); n != 3 {
		t.Errorf("closed_junk = %d, want 3", n)
	}
}

// TestServerClosesASessionOfRefusedRecipients: the finding was 20,000
// refused RCPTs in one session. With the default limits the one past
// DefaultMaxErrors is followed by 421 4.7.0 and the end of the
// connection; a recipient that could not be looked up (451, the
// service's failure) does not count.
func TestServerClosesASessionOfRefusedRecipients(t *testing.T) {
	ts := startServer(t)
	c := smtpservertest.Dial(t, ts.addr)
	c.Expect("220 ")
	c.Send("EHLO sender.test\r\n")
	c.Expect("250 ")
	c.Repeat("MAIL FROM:<>\r\n", "250 ", 1)
	c.Repeat("RCPT TO:<postmaster@customer.example>\r\n", "550 5.1.1 ", smtpserver.DefaultMaxErrors-1)
	ts.h.set(func(h *fakeHandler) { h.acceptErr = mailroom.Unavailable(errors.New("db down")) })
	c.Repeat("RCPT TO:<b-1@"+bounceDomain+">\r\n", "451 4.3.0 ", 5)
	ts.h.set(func(h *fakeHandler) { h.acceptErr = nil })
	c.Repeat("RCPT TO:<postmaster@customer.example>\r\n", "550 5.1.1 ", 2)
	c.ExpectLast("421 4.7.0 mx.test too many errors, closing connection")
	if n := ts.outcome(inbound.OutcomeClosedErrors); n != 1 {
		t.Errorf("closed_errors = %d, want 1", n)
	}
	if n := ts.outcome(inbound.OutcomeRcptRefused); n != smtpserver.DefaultMaxErrors+1 {
		t.Errorf("rcpt_refused = %d, want %d", n, smtpserver.DefaultMaxErrors+1)
	}
}

// TestServerNormalSessionWithSomeRSETsAndErrors: an MTA that delivers
// many reports over one connection, with a RSET, a NOOP and a refused
// recipient around each, is never cut.
func TestServerNormalSessionWithSomeRSETsAndErrors(t *testing.T) {
	ts := startServer(t)
	c := dial(t, ts.addr)
	for i := range 3 * smtpserver.DefaultMaxErrors {
		if err := c.Reset(); err != nil {
			t.Fatalf("RSET %d: %v", i, err)
		}
		if err := c.Noop(); err != nil {
			t.Fatalf("NOOP %d: %v", i, err)
		}
		if err := c.Mail("", nil); err != nil {
			t.Fatalf("MAIL %d: %v", i, err)
		}
		if err := c.Rcpt("postmaster@customer.example", nil); smtpservertest.Code(err) != 550 {
			t.Fatalf("RCPT %d to an unknown domain: %v, want 550", i, err)
		}
		if err := c.Rcpt("b-1@"+bounceDomain, nil); err != nil {
			t.Fatalf("RCPT %d: %v", i, err)
		}
		w, err := c.Data()
		if err != nil {
			t.Fatalf("DATA %d: %v", i, err)
		}
		if _, err := w.Write(message("report", "x\r\n")); err != nil {
			t.Fatal(err)
		}
		if err := w.Close(); err != nil {
			t.Fatalf("message %d: %v", i, err)
		}
	}
	if err := c.Quit(); err != nil {
		t.Fatal(err)
	}
	if got := len(ts.h.appliedReports()); got != 3*smtpserver.DefaultMaxErrors {
		t.Errorf("%d reports applied, want %d", got, 3*smtpserver.DefaultMaxErrors)
	}
	if strings.Contains(ts.log.String(), "session closed") {
		t.Errorf("a session was closed:\n%s", ts.log)
	}
}
