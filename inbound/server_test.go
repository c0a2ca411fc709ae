package inbound_test

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	gosmtp "github.com/emersion/go-smtp"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/mailroom/mailroom"
	"github.com/mailroom/mailroom/inbound"
	"github.com/mailroom/mailroom/poll"
	"github.com/mailroom/mailroom/smtpserver/smtpservertest"
	"github.com/mailroom/mailroom/tlscert"
)

func TestServerRefusesUnknownRecipientAtRCPT(t *testing.T) {
	ts := startServer(t)
	c := dial(t, ts.addr)
	if err := c.Mail("", nil); err != nil {
		t.Fatal(err)
	}
	for _, rcpt := range []string{"ann@example.net", "bounce-1@example.com", "bounce-1@evil." + bounceDomain + ".net"} {
		err := c.Rcpt(rcpt, nil)
		var e *gosmtp.SMTPError
		if !errors.As(err, &e) || e.Code != 550 || e.EnhancedCode != (gosmtp.EnhancedCode{5, 1, 1}) {
			t.Fatalf("RCPT TO:<%s>: %v, want 550 5.1.1", rcpt, err)
		}
		if !strings.Contains(e.Message, "bounce addresses only") {
			t.Errorf("RCPT TO:<%s>: message %q", rcpt, e.Message)
		}
	}
	// With no recipient taken there is no transaction: never a relay.
	if _, err := c.Data(); smtpservertest.Code(err) != 502 {
		t.Errorf("DATA without a recipient: %v, want 502", err)
	}
	if got := ts.outcome(inbound.OutcomeRcptRefused); got != 3 {
		t.Errorf("rcpt_refused = %d, want 3", got)
	}
	if n := len(ts.h.appliedReports()); n != 0 {
		t.Errorf("%d reports applied", n)
	}
}

func TestServerAppliesParsedReportForEachRecipient(t *testing.T) {
	ts := startServer(t)
	c := dial(t, ts.addr)
	rcpts := []string{"bounce-1@" + bounceDomain, "Bounce-2@BOUNCES.example.com"}
	const secret = "the body says 7d1f3c8e-not-for-logs"
	msg := message("dsn-1", "Your message could not be delivered.\r\n"+secret+"\r\n")
	// The second recipient named twice is applied once; an unknown one in
	// between is refused and the transaction goes on.
	if err := c.Mail("", nil); err != nil {
		t.Fatal(err)
	}
	for _, r := range []string{rcpts[0], "ann@example.net", rcpts[1], rcpts[1]} {
		err := c.Rcpt(r, nil)
		if r == "ann@example.net" {
			if smtpservertest.Code(err) != 550 {
				t.Fatalf("RCPT %s: %v", r, err)
			}
			continue
		}
		if err != nil {
			t.Fatalf("RCPT %s: %v", r, err)
		}
	}
	w, err := c.Data()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Write(msg); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatalf("DATA: %v, want 250", err)
	}

	got := ts.h.appliedReports()
	if len(got) != 2 {
		t.Fatalf("applied %d times, want 2: %+v", len(got), got)
	}
	for i, a := range got {
		if a.rcpt != rcpts[i] {
			t.Errorf("apply %d: rcpt %q, want %q", i, a.rcpt, rcpts[i])
		}
		if a.report.Kind != mailroom.ReportDSN || a.report.Text != "dsn-1" {
			t.Errorf("apply %d: report %+v, not the parsed one", i, a.report)
		}
	}
	if parsed := ts.parsedMessages(); len(parsed) != 1 || string(parsed[0]) != string(msg) {
		t.Errorf("parser got %q, want the message as sent", parsed)
	}
	if n := ts.outcome(inbound.OutcomeApplied); n != 2 {
		t.Errorf("applied = %d, want 2", n)
	}

	logs := ts.log.String()
	for _, want := range []string{"inbound message", "kind=dsn", "outcome=applied", "bounce-1@" + bounceDomain, "bytes=" + strconv.Itoa(len(msg))} {
		if !strings.Contains(logs, want) {
			t.Errorf("log lacks %q:\n%s", want, logs)
		}
	}
	if strings.Contains(logs, "7d1f3c8e") || strings.Contains(logs, "could not be delivered") {
		t.Errorf("log holds the message body:\n%s", logs)
	}

	// The connection takes another message afterwards.
	if err := send(c, rcpts[:1], message("dsn-2", "again\r\n")); err != nil {
		t.Fatalf("second message: %v", err)
	}
	if n := len(ts.h.appliedReports()); n != 3 {
		t.Errorf("applied %d, want 3", n)
	}
}

func TestServerAcceptsAndDropsWhatItCannotParse(t *testing.T) {
	ts := startServer(t)
	c := dial(t, ts.addr)
	rcpt := []string{"bounce-1@" + bounceDomain}
	for _, kind := range []string{"unparseable", "panic"} {
		if err := send(c, rcpt, message(kind, "whatever\r\n")); err != nil {
			t.Fatalf("%s: %v, want 250 (a bounce is never bounced)", kind, err)
		}
	}
	if n := len(ts.h.appliedReports()); n != 0 {
		t.Errorf("applied %d, want 0", n)
	}
	if n := ts.outcome(inbound.OutcomeUnparsed); n != 2 {
		t.Errorf("unparsed = %d, want 2", n)
	}
	if !strings.Contains(ts.log.String(), "parser panicked") {
		t.Errorf("the parser's panic is not logged:\n%s", ts.log)
	}
	// Still serving, on the same connection.
	if err := send(c, rcpt, message("dsn", "ok\r\n")); err != nil {
		t.Fatal(err)
	}
}

func TestServerStorageUnavailableAnswers451(t *testing.T) {
	ts := startServer(t)
	ts.h.set(func(h *fakeHandler) {
		h.applyErr = mailroom.Unavailable(errors.New("database is locked"))
	})
	c := dial(t, ts.addr)
	rcpt := []string{"bounce-1@" + bounceDomain}
	err := send(c, rcpt, message("dsn", "x\r\n"))
	var e *gosmtp.SMTPError
	if !errors.As(err, &e) || e.Code != 451 || e.EnhancedCode != (gosmtp.EnhancedCode{4, 3, 0}) {
		t.Fatalf("DATA with storage down: %v, want 451 4.3.0", err)
	}
	if strings.Contains(e.Message, "database") {
		t.Errorf("reply leaks the cause: %q", e.Message)
	}
	if n := ts.outcome(inbound.OutcomeUnavailable); n != 1 {
		t.Errorf("unavailable = %d, want 1", n)
	}

	// Any other failure drops the report and answers 250.
	ts.h.set(func(h *fakeHandler) { h.applyErr = errors.New("bug") })
	if err := send(c, rcpt, message("dsn", "x\r\n")); err != nil {
		t.Fatalf("DATA with a failing Apply: %v, want 250", err)
	}
	if n := ts.outcome(inbound.OutcomeFailed); n != 1 {
		t.Errorf("failed = %d, want 1", n)
	}

	// The sender retries once storage is back.
	ts.h.set(func(h *fakeHandler) { h.applyErr = nil })
	if err := send(c, rcpt, message("dsn", "x\r\n")); err != nil {
		t.Fatalf("retry: %v", err)
	}
	if n := len(ts.h.appliedReports()); n != 1 {
		t.Errorf("applied %d, want 1", n)
	}
}

func TestServerRecipientLookupFailureAnswers451(t *testing.T) {
	ts := startServer(t)
	ts.h.set(func(h *fakeHandler) { h.acceptErr = mailroom.Unavailable(errors.New("db down")) })
	c := dial(t, ts.addr)
	if err := c.Mail("", nil); err != nil {
		t.Fatal(err)
	}
	err := c.Rcpt("bounce-1@"+bounceDomain, nil)
	var e *gosmtp.SMTPError
	if !errors.As(err, &e) || e.Code != 451 || e.EnhancedCode != (gosmtp.EnhancedCode{4, 3, 0}) {
		t.Fatalf("RCPT: %v, want 451 4.3.0", err)
	}
	if n := ts.outcome(inbound.OutcomeRcptError); n != 1 {
		t.Errorf("rcpt_error = %d, want 1", n)
	}
}

func TestServerSTARTTLSAndNoAUTH(t *testing.T) {
	cert, _, err := tlscert.SelfSigned(t.TempDir(), "mx.test.example", time.Now())
	if err != nil {
		t.Fatal(err)
	}
	rc := &fakeReceiver{}
	ts := startServer(t, func(s *inbound.Server) { s.TLS, s.Receiver = tlscert.ServerConfig(cert), rc })
	roots := x509.NewCertPool()
	roots.AddCert(cert.Leaf)

	c := dial(t, ts.addr)
	if ok, _ := c.Extension("STARTTLS"); !ok {
		t.Fatal("STARTTLS not offered")
	}
	if ok, params := c.Extension("AUTH"); ok {
		t.Errorf("AUTH offered in clear: %q", params)
	}
	tc, err := gosmtp.DialStartTLS(ts.addr, &tls.Config{RootCAs: roots, ServerName: "mx.test.example"})
	if err != nil {
		t.Fatalf("STARTTLS with a verifying client: %v", err)
	}
	defer tc.Close()
	if err := tc.Hello("sender.test"); err != nil {
		t.Fatal(err)
	}
	c = tc
	state, ok := c.TLSConnectionState()
	if !ok || !state.HandshakeComplete || len(state.VerifiedChains) == 0 {
		t.Fatalf("TLS state %+v: not verified", state)
	}
	if ok, params := c.Extension("AUTH"); ok {
		t.Errorf("AUTH offered under TLS: %q", params)
	}
	if err := send(c, []string{"bounce-1@" + bounceDomain}, message("over-tls", "x\r\n")); err != nil {
		t.Fatalf("message under TLS: %v", err)
	}
	if got := ts.h.appliedReports(); len(got) != 1 || got[0].report.Text != "over-tls" {
		t.Errorf("applied %+v", got)
	}
	if !strings.Contains(ts.log.String(), "tls=true") {
		t.Errorf("log does not say the message came under TLS:\n%s", ts.log)
	}
	// Received mail says it came under TLS (its Received field: ESMTPS).
	if err := send(c, []string{"support@" + receivingDomain}, message("received over tls", "x\r\n")); err != nil {
		t.Fatalf("received message under TLS: %v", err)
	}
	if got := rc.messages(); len(got) != 1 || !got[0].TLS {
		t.Errorf("the Receiver was handed %d messages (the first under TLS: %v), want one that came under TLS",
			len(got), len(got) > 0 && got[0].TLS)
	}

	// A client that tries AUTH anyway is refused.
	raw := smtpservertest.Dial(t, ts.addr)
	raw.Expect("220 ")
	raw.Send("EHLO sender.test\r\n")
	raw.Expect("250 ")
	raw.Send("AUTH PLAIN AGFubgBzZWNyZXQ=\r\n")
	if line, _ := raw.Reply(5 * time.Second); !strings.HasPrefix(line, "5") {
		t.Errorf("AUTH in clear: %q, want a 5xx", line)
	}

	// A client that does not trust the certificate fails the handshake.
	// (go-smtp's client shakes hands at the first command after STARTTLS.)
	c2, err := gosmtp.DialStartTLS(ts.addr, &tls.Config{ServerName: "mx.test.example"})
	if err == nil {
		defer c2.Close()
		err = c2.Hello("sender.test")
	}
	var unknown x509.UnknownAuthorityError
	if !errors.As(err, &unknown) {
		t.Errorf("STARTTLS without the certificate's root: %v, want an unknown authority", err)
	}
}

func TestServerWithoutTLSOffersNoSTARTTLS(t *testing.T) {
	ts := startServer(t)
	c := dial(t, ts.addr)
	if ok, _ := c.Extension("STARTTLS"); ok {
		t.Error("STARTTLS offered without a certificate")
	}
	if ok, _ := c.Extension("AUTH"); ok {
		t.Error("AUTH offered")
	}
}

func TestServerSizeLimit(t *testing.T) {
	cases := []struct {
		name string
		max  int64 // 0: the default, 10 MiB
	}{
		{"64KiB", 64 << 10},
		{"default10MiB", 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ts := startServer(t, func(s *inbound.Server) { s.MaxBytes = tc.max })
			limit := int(tc.max)
			if limit == 0 {
				limit = inbound.DefaultMaxBytes
			}
			c := dial(t, ts.addr)
			if size, ok := c.MaxMessageSize(); !ok || size < limit || size > limit+1 {
				t.Errorf("SIZE advertised %d (%v), want about %d", size, ok, limit)
			}
			rcpt := []string{"bounce-1@" + bounceDomain}

			err := send(c, rcpt, messageOfSize(limit+1))
			var e *gosmtp.SMTPError
			if !errors.As(err, &e) || e.Code != 552 || e.EnhancedCode != (gosmtp.EnhancedCode{5, 3, 4}) {
				t.Fatalf("message of %d+1 bytes: %v, want 552 5.3.4", limit, err)
			}
			// The same connection goes on, and takes a message of exactly
			// the limit.
			if err := send(c, rcpt, messageOfSize(limit)); err != nil {
				t.Fatalf("message of exactly %d bytes: %v, want 250", limit, err)
			}
			parsed := ts.parsedMessages()
			if n := len(parsed[len(parsed)-1]); n != limit {
				t.Errorf("parser got %d bytes, want %d", n, limit)
			}
			if got := ts.h.appliedReports(); len(got) != 1 {
				t.Errorf("applied %d reports, want 1 (the one within the limit)", len(got))
			}
			if n := ts.outcome(inbound.OutcomeTooLarge); n != 1 {
				t.Errorf("too_large = %d, want 1", n)
			}

			// A size declared beyond the limit is refused at MAIL (RFC 1870).
			raw := smtpservertest.Dial(t, ts.addr)
			raw.Expect("220 ")
			raw.Send("EHLO sender.test\r\n")
			raw.Expect("250 ")
			raw.Send("MAIL FROM:<> SIZE=" + strconv.Itoa(limit+1) + "\r\n")
			raw.Expect("552 5.3.4")
			raw.Send("MAIL FROM:<> SIZE=" + strconv.Itoa(limit) + "\r\n")
			raw.Expect("250 ")
		})
	}
}

func TestServerMaxRecipients(t *testing.T) {
	ts := startServer(t, func(s *inbound.Server) { s.MaxRecipients = 2 })
	c := dial(t, ts.addr)
	if err := c.Mail("", nil); err != nil {
		t.Fatal(err)
	}
	for i := range 2 {
		if err := c.Rcpt("bounce-"+strconv.Itoa(i)+"@"+bounceDomain, nil); err != nil {
			t.Fatal(err)
		}
	}
	if err := c.Rcpt("bounce-3@"+bounceDomain, nil); smtpservertest.Code(err) != 452 {
		t.Errorf("third RCPT: %v, want 452", err)
	}
}

func TestServerShutdownLetsMessageInFlightFinish(t *testing.T) {
	ts := startServer(t)
	release := make(chan struct{})
	entered := make(chan struct{}, 1)
	ts.h.set(func(h *fakeHandler) { h.block, h.entered = release, entered })

	idle := smtpservertest.Dial(t, ts.addr) // a client between commands
	idle.Expect("220 ")

	c := dial(t, ts.addr)
	sent := make(chan error, 1)
	go func() { sent <- send(c, []string{"bounce-1@" + bounceDomain}, message("dsn", "x\r\n")) }()
	select {
	case <-entered:
	case <-time.After(10 * time.Second):
		t.Fatal("Apply not called")
	}

	shut := make(chan error, 1)
	go func() { shut <- ts.srv.Shutdown(context.Background()) }()
	// New connections are refused once the listener is closed.
	poll.Until(t, 10*time.Second, "the listener still accepts", func() bool {
		conn, err := net.DialTimeout("tcp", ts.addr, time.Second)
		if err != nil {
			return true
		}
		_ = conn.Close()
		return false
	})
	select {
	case err := <-shut:
		t.Fatalf("Shutdown returned (%v) while a message was being applied", err)
	default:
	}
	close(release)
	if err := <-sent; err != nil {
		t.Fatalf("the message in flight: %v, want 250", err)
	}
	select {
	case err := <-shut:
		if err != nil {
			t.Fatalf("Shutdown: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Shutdown did not return")
	}
	if _, _, err := idle.ClosedWithin(10 * time.Second); err != nil {
		t.Errorf("the idle client was not disconnected: %v", err)
	}
	select {
	case err := <-ts.serveErr:
		if !errors.Is(err, inbound.ErrServerClosed) {
			t.Errorf("Serve: %v", err)
		}
		ts.serveErr <- err // for the cleanup's check
	case <-time.After(10 * time.Second):
		t.Fatal("Serve did not return")
	}
}

func TestServerBDAT(t *testing.T) {
	ts := startServer(t)
	msg := string(message("chunked", "x\r\n"))
	c := smtpservertest.Dial(t, ts.addr)
	c.Expect("220 ")
	c.Send("EHLO sender.test\r\nMAIL FROM:<>\r\nRCPT TO:<bounce-1@" + bounceDomain + ">\r\n")
	c.Expect("250 ")
	c.Expect("250 ")
	c.Expect("250 ")
	c.Send("BDAT 10\r\n" + msg[:10])
	c.Expect("250 ")
	c.Send("BDAT " + strconv.Itoa(len(msg)-10) + " LAST\r\n" + msg[10:])
	c.Expect("250 ")
	if got := ts.h.appliedReports(); len(got) != 1 || got[0].report.Text != "chunked" {
		t.Fatalf("applied %+v", got)
	}
	// MAIL inside a transaction wants RSET first (RFC 5321 §4.1.1.2).
	c.Send("MAIL FROM:<>\r\nMAIL FROM:<>\r\nRSET\r\nMAIL FROM:<>\r\n")
	c.Expect("250 ")
	c.Expect("503 5.5.1")
	c.Expect("250 ")
	c.Expect("250 ")
}

// TestServerDefaultParser runs the server with ParseReport, as cmd wires
// it, over the parser's sample reports: each is answered 250, and a
// Postfix bounce reaches the Handler as a DSN.
func TestServerDefaultParser(t *testing.T) {
	ts := startServer(t, func(s *inbound.Server) { s.Parse = nil })
	files, err := filepath.Glob("testdata/reports/*")
	if err != nil || len(files) == 0 {
		t.Skipf("no sample reports (%v)", err)
	}
	rcpt := []string{"b-1@" + bounceDomain}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		c := dial(t, ts.addr)
		if err := send(c, rcpt, data); err != nil {
			t.Errorf("%s: %v, want 250", filepath.Base(f), err)
		}
		_ = c.Quit()
	}
	postfix, err := os.ReadFile("testdata/reports/postfix-user-unknown.eml")
	if err != nil {
		t.Skip("no Postfix sample")
	}
	before := len(ts.h.appliedReports())
	if err := send(dial(t, ts.addr), rcpt, postfix); err != nil {
		t.Fatal(err)
	}
	got := ts.h.appliedReports()
	if len(got) != before+1 || got[before].report.Kind != mailroom.ReportDSN {
		t.Fatalf("the Postfix bounce was applied as %+v, want one DSN", got[before:])
	}
}

func TestServerMetrics(t *testing.T) {
	reg := prometheus.NewPedanticRegistry()
	observe := inbound.Metrics(reg)
	ts := startServer(t, func(s *inbound.Server) { s.Observe = observe })
	c := dial(t, ts.addr)
	if err := send(c, []string{"bounce-1@" + bounceDomain}, message("dsn", "x\r\n")); err != nil {
		t.Fatal(err)
	}
	if err := c.Mail("", nil); err != nil {
		t.Fatal(err)
	}
	_ = c.Rcpt("nobody@example.net", nil)

	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]float64{}
	for _, f := range families {
		if f.GetName() != "mailroom_inbound_smtp_total" {
			continue
		}
		for _, m := range f.GetMetric() {
			got[m.GetLabel()[0].GetValue()] = m.GetCounter().GetValue()
		}
	}
	if len(got) != len(inbound.Outcomes) {
		t.Errorf("counters %v, want one per outcome from the start", got)
	}
	if got["applied"] != 1 || got["rcpt_refused"] != 1 || got["failed"] != 0 {
		t.Errorf("counters %v", got)
	}
}
