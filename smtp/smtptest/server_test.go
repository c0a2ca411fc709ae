package smtptest

import (
	"crypto/tls"
	"errors"
	"strings"
	"testing"
	"time"

	gosmtp "github.com/emersion/go-smtp"
)

// These tests drive the server with go-smtp's client, a client other than
// the one under test in package smtp, so that the scripting is checked on
// its own.

func send(t *testing.T, s *Server, to ...string) error {
	t.Helper()
	c, err := gosmtp.Dial(s.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	return c.SendMail("from@example.test", to, strings.NewReader("Subject: hi\r\n\r\nbody\r\n"))
}

func TestScriptedRecipientReplies(t *testing.T) {
	s := Start(t)
	s.ReplyOnce("grey@example.test", 450, "4.7.1", "Greylisted")
	s.Reply("gone@example.test", 550, "5.1.1", "No such user")

	var smtpErr *gosmtp.SMTPError
	if err := send(t, s, "grey@example.test"); !errors.As(err, &smtpErr) || smtpErr.Code != 450 {
		t.Fatalf("first RCPT: %v, want 450", err)
	}
	if err := send(t, s, "grey@example.test"); err != nil {
		t.Fatalf("second RCPT: %v, want accepted", err)
	}
	if err := send(t, s, "gone@example.test"); !errors.As(err, &smtpErr) || smtpErr.Code != 550 || smtpErr.EnhancedCode != (gosmtp.EnhancedCode{5, 1, 1}) {
		t.Fatalf("RCPT: %v, want 550 5.1.1", err)
	}
	msgs := s.WaitMessages(t, 1, time.Second)
	if len(msgs) != 1 || msgs[0].Rcpts[0] != "grey@example.test" || string(msgs[0].Data) != "Subject: hi\r\n\r\nbody\r\n" {
		t.Fatalf("messages %+v", msgs)
	}
	if st := s.Stats(); st.Connections != 3 || st.Transactions != 3 {
		t.Errorf("stats %+v, want 3 connections and 3 transactions", st)
	}
}

func TestDropDuringDataRecordsNothing(t *testing.T) {
	s := Start(t)
	s.DropDuringData(1)
	if err := send(t, s, "a@example.test"); err == nil {
		t.Fatal("a dropped transaction succeeded")
	}
	if err := send(t, s, "a@example.test"); err != nil {
		t.Fatalf("the transaction after the drop: %v", err)
	}
	if msgs := s.Messages(); len(msgs) != 1 {
		t.Fatalf("recorded %d messages, want only the second", len(msgs))
	}
}

func TestAuthRequired(t *testing.T) {
	s := Start(t, WithAuth("user", "pass"))
	var smtpErr *gosmtp.SMTPError
	if err := send(t, s, "a@example.test"); !errors.As(err, &smtpErr) || smtpErr.Code != 530 {
		t.Fatalf("MAIL without AUTH: %v, want 530", err)
	}
}

// startTLS runs STARTTLS with cfg and one command under TLS, since
// go-smtp's client only shakes hands when it next writes.
func startTLS(t *testing.T, s *Server, cfg *tls.Config) error {
	t.Helper()
	c, err := gosmtp.DialStartTLS(s.Addr(), cfg)
	if err != nil {
		return err
	}
	defer c.Close()
	return c.Noop()
}

func TestFailingTLSFailsEveryHandshake(t *testing.T) {
	s := Start(t, WithFailingTLS())
	for range 2 {
		if err := startTLS(t, s, &tls.Config{InsecureSkipVerify: true}); err == nil {
			t.Fatal("the TLS handshake succeeded")
		}
	}
	if st := s.Stats(); st.TLSHandshakes != 2 || st.Connections != 2 {
		t.Errorf("stats %+v, want 2 TLS handshakes begun on 2 connections", st)
	}
}

func TestSTARTTLSCountsHandshakes(t *testing.T) {
	s := Start(t, WithSTARTTLS())
	if err := startTLS(t, s, &tls.Config{RootCAs: s.RootCAs(), ServerName: "localhost"}); err != nil {
		t.Fatalf("STARTTLS: %v", err)
	}
	if st := s.Stats(); st.TLSHandshakes != 1 {
		t.Errorf("stats %+v, want 1 TLS handshake", st)
	}
}

func TestRefusedSTARTTLSGoesOnInClear(t *testing.T) {
	s := Start(t, WithRefusedSTARTTLS())
	c, err := gosmtp.Dial(s.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if err := c.Hello("client.test"); err != nil {
		t.Fatal(err)
	}
	if ok, _ := c.Extension("STARTTLS"); !ok {
		t.Fatal("STARTTLS not announced")
	}
	if ok, _ := c.Extension("PIPELINING"); !ok {
		t.Fatal("PIPELINING no longer announced")
	}
	if err := startTLS(t, s, &tls.Config{InsecureSkipVerify: true}); err == nil {
		t.Fatal("STARTTLS succeeded")
	}
	if err := c.SendMail("from@example.test", []string{"a@example.test"}, strings.NewReader("Subject: hi\r\n\r\nbody\r\n")); err != nil {
		t.Fatalf("mail in clear: %v", err)
	}
	if st := s.Stats(); st.TLSHandshakes != 0 {
		t.Errorf("stats %+v, want no handshake", st)
	}
}
