package inbound_test

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"sync"
	"testing"

	gosmtp "github.com/emersion/go-smtp"

	"github.com/mailroom/mailroom"
	"github.com/mailroom/mailroom/inbound"
)

// receivingDomain is the domain the fake Receiver takes mail for.
const receivingDomain = "inbox.example.com"

// fakeReceiver takes every address of receivingDomain and records what
// it is handed; receiveErr, when set, is what Receive answers, and
// panicking makes it panic.
type fakeReceiver struct {
	mu         sync.Mutex
	acceptErr  error
	receiveErr error
	panicking  bool
	received   []mailroom.InboundMessage
}

func (r *fakeReceiver) Accepts(_ context.Context, rcpt string) (bool, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.acceptErr != nil {
		return false, r.acceptErr
	}
	return strings.HasSuffix(strings.ToLower(rcpt), "@"+receivingDomain), nil
}

func (r *fakeReceiver) Receive(_ context.Context, in mailroom.InboundMessage) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.panicking {
		panic("receiver bug")
	}
	if r.receiveErr != nil {
		return r.receiveErr
	}
	r.received = append(r.received, in)
	return nil
}

func (r *fakeReceiver) messages() []mailroom.InboundMessage {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]mailroom.InboundMessage(nil), r.received...)
}

func startReceivingServer(t *testing.T, maxBytes int64) (*testServer, *fakeReceiver) {
	t.Helper()
	rc := &fakeReceiver{}
	ts := startServer(t, func(s *inbound.Server) {
		s.Receiver = rc
		s.MaxBytes = maxBytes
	})
	return ts, rc
}

func sendFrom(c *gosmtp.Client, from string, to []string, msg []byte) error {
	if err := c.Mail(from, nil); err != nil {
		return err
	}
	for _, rcpt := range to {
		if err := c.Rcpt(rcpt, nil); err != nil {
			return err
		}
	}
	w, err := c.Data()
	if err != nil {
		return err
	}
	if _, err := w.Write(msg); err != nil {
		return err
	}
	return w.Close()
}

func smtpCode(err error) int {
	var e *gosmtp.SMTPError
	if errors.As(err, &e) {
		return e.Code
	}
	return 0
}

// Every address of a receiving domain is taken (+tags as given, a quoted
// local part with its quotes); a message to several of them is handed
// over once, with its bytes as sent and the envelope; another domain is
// refused at RCPT.
func TestReceivingDomainTakesAnyAddressOnce(t *testing.T) {
	ts, rc := startReceivingServer(t, 0)
	c := dial(t, ts.addr)
	msg := []byte("From: a@sender.test\r\nTo: support@inbox.example.com\r\nSubject: hi\r\n\r\nhello\r\n")
	to := []string{"support+ticket-7@inbox.example.com", "Anyone@INBOX.example.com", `"first last"@inbox.example.com`}
	if err := sendFrom(c, "a@sender.test", to, msg); err != nil {
		t.Fatalf("sending to a receiving domain: %v", err)
	}
	got := rc.messages()
	if len(got) != 1 {
		t.Fatalf("the Receiver was handed %d messages, want 1", len(got))
	}
	in := got[0]
	if !bytes.Equal(in.Data, msg) || in.MailFrom != "a@sender.test" || in.Helo != "sender.test" ||
		strings.Join(in.Recipients, ",") != strings.Join(to, ",") || !strings.HasPrefix(in.RemoteIP, "127.0.0.1:") || in.TLS {
		t.Errorf("handed %+v", in)
	}
	if ts.outcome(inbound.OutcomeReceived) != 1 {
		t.Errorf("outcome received counted %d times, want 1", ts.outcome(inbound.OutcomeReceived))
	}

	c2 := dial(t, ts.addr)
	if err := c2.Mail("a@sender.test", nil); err != nil {
		t.Fatal(err)
	}
	for _, rcpt := range []string{"x@other.example", "x@example.com", "x@sub." + receivingDomain} {
		if err := c2.Rcpt(rcpt, nil); smtpCode(err) != 550 {
			t.Errorf("RCPT %s: %v, want 550 (never a relay)", rcpt, err)
		}
	}
}

// A transaction to a bounce address and a receiving address: the message
// is stored for the receiving one and read as a report for the other.
func TestReceivingAndBounceInOneTransaction(t *testing.T) {
	ts, rc := startReceivingServer(t, 0)
	c := dial(t, ts.addr)
	if err := sendFrom(c, "", []string{"b-1@" + bounceDomain, "help@" + receivingDomain}, message("mixed", "body")); err != nil {
		t.Fatal(err)
	}
	if n := len(rc.messages()); n != 1 || strings.Join(rc.messages()[0].Recipients, ",") != "help@"+receivingDomain {
		t.Errorf("the Receiver got %d messages (%v)", n, rc.messages())
	}
	if a := ts.h.appliedReports(); len(a) != 1 || a[0].rcpt != "b-1@"+bounceDomain {
		t.Errorf("applied reports %v, want one for the bounce address", a)
	}
}

// Storage that cannot take the message is 451, as is a Receiver that
// fails otherwise or panics: nothing is acknowledged that was not
// stored, and the listener stays up.
func TestReceivingUnavailableIs451(t *testing.T) {
	ts, rc := startReceivingServer(t, 0)
	msg := []byte("Subject: x\r\n\r\nbody\r\n")
	for name, set := range map[string]func(){
		"unavailable": func() { rc.receiveErr = mailroom.Errorf(mailroom.ECodeUnavailable, "database down") },
		"other error": func() { rc.receiveErr = errors.New("bug") },
		"panic":       func() { rc.receiveErr, rc.panicking = nil, true },
	} {
		rc.mu.Lock()
		set()
		rc.mu.Unlock()
		c := dial(t, ts.addr)
		if err := sendFrom(c, "a@sender.test", []string{"x@" + receivingDomain}, msg); smtpCode(err) != 451 {
			t.Errorf("%s: %v, want 451", name, err)
		}
	}
	rc.mu.Lock()
	rc.receiveErr, rc.panicking = nil, false
	rc.mu.Unlock()
	c := dial(t, ts.addr)
	if err := sendFrom(c, "a@sender.test", []string{"x@" + receivingDomain}, msg); err != nil {
		t.Fatalf("after failures, a message is refused: %v", err)
	}
	rc.mu.Lock()
	rc.acceptErr = errors.New("database down")
	rc.mu.Unlock()
	c = dial(t, ts.addr)
	if err := c.Mail("a@sender.test", nil); err != nil {
		t.Fatal(err)
	}
	if err := c.Rcpt("x@"+receivingDomain, nil); smtpCode(err) != 451 {
		t.Errorf("RCPT while the Receiver cannot tell: %v, want 451", err)
	}
}

// The size limit is advertised in SIZE (RFC 1870) and a message beyond it
// is 552, neither stored.
func TestReceivingSizeLimit(t *testing.T) {
	const limit = 64 << 10
	ts, rc := startReceivingServer(t, limit)
	c := dial(t, ts.addr)
	if ok, v := c.Extension("SIZE"); !ok || v != "65537" {
		t.Errorf("EHLO SIZE %v %q, want one above the limit of %d (a message of exactly the limit is taken)", ok, v, limit)
	}
	if err := sendFrom(c, "a@sender.test", []string{"x@" + receivingDomain}, messageOfSize(limit)); err != nil {
		t.Fatalf("a message of exactly the limit: %v", err)
	}
	c = dial(t, ts.addr)
	if err := sendFrom(c, "a@sender.test", []string{"x@" + receivingDomain}, messageOfSize(limit+1)); smtpCode(err) != 552 {
		t.Errorf("a message one byte beyond the limit: %v, want 552", err)
	}
	if n := len(rc.messages()); n != 1 {
		t.Errorf("%d messages handed to the Receiver, want only the one within the limit", n)
	}
}
