package submission_test

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/base64"
	"errors"
	"net/smtp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/emersion/go-sasl"
	gosmtp "github.com/emersion/go-smtp"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/mailroom/mailroom/poll"
	"github.com/mailroom/mailroom/smtpserver"
	"github.com/mailroom/mailroom/smtpserver/smtpservertest"
	"github.com/mailroom/mailroom/submission"
	"github.com/mailroom/mailroom/tlscert"
)

// TestSubmitOverSTARTTLSWithNetSMTP is the way most applications come: Go's
// net/smtp, STARTTLS, AUTH PLAIN, one message for two recipients.
func TestSubmitOverSTARTTLSWithNetSMTP(t *testing.T) {
	ts := startServer(t)
	c, err := smtp.Dial(ts.addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if err := c.Hello("client.test"); err != nil {
		t.Fatal(err)
	}
	if ok, _ := c.Extension("AUTH"); ok {
		t.Error("AUTH advertised before TLS")
	}
	if ok, _ := c.Extension("STARTTLS"); !ok {
		t.Fatal("STARTTLS not advertised")
	}
	if err := c.StartTLS(ts.client); err != nil {
		t.Fatalf("STARTTLS: %v", err)
	}
	ok, mechs := c.Extension("AUTH")
	if !ok || !strings.Contains(mechs, "PLAIN") || !strings.Contains(mechs, "LOGIN") {
		t.Errorf("AUTH under TLS: %v %q, want PLAIN and LOGIN", ok, mechs)
	}
	if ok, size := c.Extension("SIZE"); !ok || size != "16777216" {
		t.Errorf("SIZE %v %q, want 16777216", ok, size)
	}
	if err := c.Auth(smtp.PlainAuth("", "whoever", goodKey, "127.0.0.1")); err != nil {
		t.Fatalf("AUTH PLAIN: %v", err)
	}
	msg := message("Hello", "Body line\r\n.leading dot\r\n")
	if err := c.Mail("app@example.com"); err != nil {
		t.Fatal(err)
	}
	for _, r := range []string{"ann@example.net", "bob@example.org"} {
		if err := c.Rcpt(r); err != nil {
			t.Fatal(err)
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
		t.Fatalf("end of DATA: %v", err)
	}
	if err := c.Quit(); err != nil {
		t.Fatal(err)
	}

	got := ts.h.messages()
	if len(got) != 1 {
		t.Fatalf("%d messages submitted, want 1", len(got))
	}
	m := got[0]
	if m.keyID != "key1" || m.mailFrom != "app@example.com" || !slices.Equal(m.rcpts, []string{"ann@example.net", "bob@example.org"}) {
		t.Errorf("envelope %+v", m)
	}
	if !bytes.Equal(m.data, msg) {
		t.Errorf("message %q, want %q", m.data, msg)
	}
	if n := ts.outcome(submission.OutcomeQueued); n != 1 {
		t.Errorf("queued = %d", n)
	}
	log := ts.log.String()
	if !strings.Contains(log, "key_id=key1") || !strings.Contains(log, "id=msg_1") {
		t.Errorf("log does not name the key id and message id:\n%s", log)
	}
}

// TestQueuedReplyNamesTheMessage: the 250 names the id Submit returned, and
// the connection takes more messages.
func TestQueuedReplyNamesTheMessage(t *testing.T) {
	ts := startServer(t)
	c := ts.dialTLS(t, goodKey)
	for i, want := range []string{"2.0.0 queued as msg_1", "2.0.0 queued as msg_2"} {
		text, err := send(c, "app@example.com", []string{"ann@example.net"}, message("n", "x\r\n"))
		if err != nil || text != want {
			t.Fatalf("message %d: %q %v, want %q", i, text, err, want)
		}
	}
	// The enhanced code as a raw client sees it.
	raw := smtpservertest.Dial(t, ts.addr)
	raw.StartTLS(ts.client)
	authPlain(raw, goodKey)
	raw.Expect("235 ")
	raw.Send("MAIL FROM:<app@example.com>\r\nRCPT TO:<ann@example.net>\r\nDATA\r\n")
	raw.Expect("250 ")
	raw.Expect("250 ")
	raw.Expect("354 ")
	raw.Send("Subject: raw\r\n\r\nx\r\n.\r\n")
	if line := raw.Expect("250 "); line != "250 2.0.0 queued as msg_3" {
		t.Errorf("reply %q", line)
	}
}

// TestBDAT: a message in chunks (RFC 3030), as go-smtp offers CHUNKING.
func TestBDAT(t *testing.T) {
	ts := startServer(t)
	c := smtpservertest.Dial(t, ts.addr)
	c.StartTLS(ts.client)
	authPlain(c, goodKey)
	c.Expect("235 ")
	c.Send("MAIL FROM:<app@example.com>\r\nRCPT TO:<ann@example.net>\r\n")
	c.Expect("250 ")
	c.Expect("250 ")
	c.Send("BDAT 17\r\nSubject: bdat\r\n\r\n")
	c.Expect("250 ")
	c.Send("BDAT 4 LAST\r\nhi\r\n")
	if line := c.Expect("250 "); line != "250 2.0.0 queued as msg_1" {
		t.Errorf("reply %q", line)
	}
	if got := ts.h.messages(); len(got) != 1 || string(got[0].data) != "Subject: bdat\r\n\r\nhi\r\n" {
		t.Errorf("submitted %+v", got)
	}
}

func TestAuthLogin(t *testing.T) {
	ts := startServer(t)
	b64 := func(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }

	// Prompted for both.
	c := smtpservertest.Dial(t, ts.addr)
	c.StartTLS(ts.client)
	c.Send("AUTH LOGIN\r\n")
	if line := c.Expect("334 "); line != "334 "+b64("Username:") {
		t.Errorf("first challenge %q", line)
	}
	c.Send(b64("anyone") + "\r\n")
	if line := c.Expect("334 "); line != "334 "+b64("Password:") {
		t.Errorf("second challenge %q", line)
	}
	c.Send(b64(goodKey) + "\r\n")
	c.Expect("235 ")
	c.Send("MAIL FROM:<app@example.com>\r\n")
	c.Expect("250 ")

	// The user name as an initial response; a wrong key.
	c = smtpservertest.Dial(t, ts.addr)
	c.StartTLS(ts.client)
	c.Send("AUTH LOGIN " + b64("anyone") + "\r\n")
	c.Expect("334 " + b64("Password:"))
	c.Send(b64("mailroom_nope_wrong") + "\r\n")
	if line := c.Expect("535 "); line != "535 5.7.8 Authentication credentials invalid" {
		t.Errorf("wrong key: %q", line)
	}
	// Cancelled (RFC 4954 §4).
	c.Send("AUTH LOGIN\r\n")
	c.Expect("334 ")
	c.Send("*\r\n")
	c.Expect("501 ")
	c.Send("NOOP\r\n")
	c.Expect("250 ")
}

// TestImplicitTLS: the submissions port speaks TLS from the first byte
// (RFC 8314 §3.3): no STARTTLS offered, AUTH offered at once.
func TestImplicitTLS(t *testing.T) {
	ts := startServer(t)
	c, err := gosmtp.DialTLS(ts.tlsAddr, ts.client)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if err := c.Hello("client.test"); err != nil {
		t.Fatal(err)
	}
	if ok, _ := c.Extension("STARTTLS"); ok {
		t.Error("STARTTLS offered under TLS")
	}
	if !c.SupportsAuth("PLAIN") || !c.SupportsAuth("LOGIN") {
		t.Error("AUTH PLAIN LOGIN not offered on the implicit-TLS port")
	}
	if err := c.Auth(sasl.NewPlainClient("", "x", goodKey)); err != nil {
		t.Fatal(err)
	}
	text, err := send(c, "app@example.com", []string{"ann@example.net"}, message("tls", "x\r\n"))
	if err != nil || text != "2.0.0 queued as msg_1" {
		t.Fatalf("%q %v", text, err)
	}

	// A clear-text client on that port gets nothing it could take for a
	// greeting.
	raw := smtpservertest.Dial(t, ts.tlsAddr)
	raw.Send("EHLO client.test\r\n")
	_, rest, _ := raw.ClosedWithin(10 * time.Second)
	if strings.HasPrefix(rest, "220") {
		t.Errorf("clear text greeted on the TLS port: %q", rest)
	}
}

// TestAuthBeforeTLS: not advertised, and refused with 538 without looking
// at the credentials.
func TestAuthBeforeTLS(t *testing.T) {
	ts := startServer(t)
	c := smtpservertest.Dial(t, ts.addr)
	c.Expect("220 ")
	c.Send("EHLO client.test\r\n")
	for _, line := range c.ReplyLines() {
		if strings.Contains(line, "AUTH") {
			t.Errorf("EHLO in clear offers %q", line)
		}
	}
	authPlain(c, goodKey)
	if line := c.Expect("538 "); line != "538 5.7.11 Encryption required: send STARTTLS first" {
		t.Errorf("AUTH PLAIN in clear: %q", line)
	}
	c.Send("AUTH LOGIN\r\n")
	c.Expect("538 5.7.11 ")
	if n := ts.h.authCalls(); n != 0 {
		t.Errorf("Authenticate called %d times for AUTH in clear", n)
	}
	if n := ts.outcome(submission.OutcomeAuthNoTLS); n != 2 {
		t.Errorf("auth_no_tls = %d, want 2", n)
	}
	// MAIL in clear is refused as well: not logged in.
	c.Send("MAIL FROM:<app@example.com>\r\n")
	c.Expect("530 5.7.0 ")
	// And STARTTLS still works after all that.
	c.Send("STARTTLS\r\n")
	c.Expect("220 ")
}

func TestMailBeforeAuth(t *testing.T) {
	ts := startServer(t)
	c := ts.dialTLS(t, "")
	err := c.Mail("app@example.com", nil)
	e := wantReply(t, "MAIL before AUTH", err, 530, gosmtp.EnhancedCode{5, 7, 0})
	if e.Message != "Authentication required" {
		t.Errorf("message %q", e.Message)
	}
	// RCPT and DATA without MAIL: go-smtp's bad-sequence reply, a 5xx.
	raw := smtpservertest.Dial(t, ts.addr)
	raw.StartTLS(ts.client)
	raw.Send("RCPT TO:<ann@example.net>\r\n")
	raw.Expect("50")
	raw.Send("DATA\r\n")
	raw.Expect("50")
	authPlain(raw, goodKey)
	raw.Expect("235 ")
	raw.Send("RCPT TO:<ann@example.net>\r\n")
	raw.Expect("50")
	raw.Send("MAIL FROM:<app@example.com>\r\n")
	raw.Expect("250 ")
	raw.Send("MAIL FROM:<app@example.com>\r\n")
	raw.Expect("503 5.5.1 ")
	if n := ts.outcome(submission.OutcomeAuthRequired); n != 1 {
		t.Errorf("auth_required = %d", n)
	}
	if n := len(ts.h.messages()); n != 0 {
		t.Errorf("%d messages submitted", n)
	}
}

func TestBadKeys(t *testing.T) {
	ts := startServer(t, func(s *submission.Server) { s.AuthFailureBurst = 10 })
	c := smtpservertest.Dial(t, ts.addr)
	c.StartTLS(ts.client)
	for _, key := range []string{"mailroom_key1_wrong", "not a key at all", revokedKey, scopeKey} {
		authPlain(c, key)
		if line := c.Expect("535 "); line != "535 5.7.8 Authentication credentials invalid" {
			t.Errorf("key %q: %q", key, line)
		}
	}
	// A malformed PLAIN response is a wrong key too.
	c.Send("AUTH PLAIN " + base64.StdEncoding.EncodeToString([]byte("no-nuls")) + "\r\n")
	c.Expect("535 5.7.8 ")
	// The connection goes on; the failures so far are within the budget.
	authPlain(c, goodKey)
	c.Expect("235 ")
	if n := ts.outcome(submission.OutcomeAuthFailed); n != 5 {
		t.Errorf("auth_failed = %d, want 5", n)
	}
}

// TestAuthUnavailable: a key that cannot be checked is a temporary
// failure, not a wrong key, and not charged to the address.
func TestAuthUnavailable(t *testing.T) {
	ts := startServer(t, func(s *submission.Server) { s.AuthFailureBurst = 1 })
	ts.h.set(func(h *fakeHandler) { h.authErr = unavailable() })
	c := smtpservertest.Dial(t, ts.addr)
	c.StartTLS(ts.client)
	for range 3 {
		authPlain(c, goodKey)
		c.Expect("454 4.7.0 ")
	}
	ts.h.set(func(h *fakeHandler) { h.authErr = errors.New("bug") })
	authPlain(c, goodKey)
	c.Expect("454 4.7.0 ")
	ts.h.set(func(h *fakeHandler) { h.authErr = nil })
	authPlain(c, goodKey)
	c.Expect("235 ")
	if n := ts.outcome(submission.OutcomeAuthUnavailable); n != 4 {
		t.Errorf("auth_unavailable = %d, want 4", n)
	}
}

// TestRevocationTakesEffectAtNextMail: the key is checked again at MAIL.
func TestRevocationTakesEffectAtNextMail(t *testing.T) {
	ts := startServer(t)
	c := ts.dialTLS(t, otherKey)
	if _, err := send(c, "app@example.com", []string{"ann@example.net"}, message("1", "x\r\n")); err != nil {
		t.Fatal(err)
	}
	ts.h.set(func(h *fakeHandler) { h.revoked[otherKey] = true })
	wantReply(t, "MAIL after revocation", c.Mail("app@example.com", nil), 535, gosmtp.EnhancedCode{5, 7, 8})
	if n := ts.outcome(submission.OutcomeKeyRejected); n != 1 {
		t.Errorf("key_rejected = %d", n)
	}
	// Storage down at MAIL: a temporary failure.
	ts.h.set(func(h *fakeHandler) { h.revoked[otherKey] = false; h.authErr = unavailable() })
	wantReply(t, "MAIL with storage down", c.Mail("app@example.com", nil), 421, gosmtp.EnhancedCode{4, 3, 0})
	ts.h.set(func(h *fakeHandler) { h.authErr = nil })
	if err := c.Mail("app@example.com", nil); err != nil {
		t.Fatalf("MAIL once the key passes again: %v", err)
	}
}

func TestAllowFalseAtMail(t *testing.T) {
	ts := startServer(t)
	c := ts.dialTLS(t, goodKey)
	ts.h.set(func(h *fakeHandler) { h.deny = true })
	e := wantReply(t, "MAIL over the rate limit", c.Mail("app@example.com", nil), 451, gosmtp.EnhancedCode{4, 7, 0})
	if e.Message != "rate limited, try again later" {
		t.Errorf("message %q", e.Message)
	}
	ts.h.set(func(h *fakeHandler) { h.deny = false })
	if text, err := send(c, "app@example.com", []string{"ann@example.net"}, message("ok", "x\r\n")); err != nil {
		t.Fatalf("after the limit: %q %v", text, err)
	}
	if n := ts.outcome(submission.OutcomeRateLimited); n != 1 {
		t.Errorf("rate_limited = %d", n)
	}
}

func TestFiftyOneRecipients(t *testing.T) {
	ts := startServer(t)
	c := ts.dialTLS(t, goodKey)
	if ok, limits := c.Extension("LIMITS"); !ok || limits != "RCPTMAX=50" {
		t.Errorf("LIMITS %v %q", ok, limits)
	}
	if err := c.Mail("app@example.com", nil); err != nil {
		t.Fatal(err)
	}
	var rcpts []string
	for i := range 51 {
		rcpt := "r" + strings.Repeat("x", i%5) + string(rune('a'+i%26)) + "@example.net"
		err := c.Rcpt(rcpt, nil)
		if i < 50 {
			if err != nil {
				t.Fatalf("RCPT %d: %v", i+1, err)
			}
			rcpts = append(rcpts, rcpt)
			continue
		}
		wantReply(t, "RCPT 51", err, 452, gosmtp.EnhancedCode{4, 5, 3})
	}
	w, err := c.Data()
	if err != nil {
		t.Fatal(err)
	}
	_, _ = w.Write(message("many", "x\r\n"))
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if got := ts.h.messages(); len(got) != 1 || !slices.Equal(got[0].rcpts, rcpts) {
		t.Errorf("submitted %d recipients, want the first 50", len(got[0].rcpts))
	}
}

func TestOversizeMessage(t *testing.T) {
	const max = 4096
	ts := startServer(t, func(s *submission.Server) { s.MaxBytes = max })
	c := ts.dialTLS(t, goodKey)
	if size, ok := c.MaxMessageSize(); !ok || size != max {
		t.Errorf("SIZE %d %v, want %d", size, ok, max)
	}
	// Declared too large: refused at MAIL (RFC 1870 §6.1).
	wantReply(t, "MAIL SIZE=5000", c.Mail("app@example.com", &gosmtp.MailOptions{Size: 5000}), 552, gosmtp.EnhancedCode{5, 3, 4})

	for _, n := range []int{max, 3 * max} {
		_, err := send(c, "app@example.com", []string{"ann@example.net"}, messageOfSize(n))
		wantReply(t, "an oversize message", err, 552, gosmtp.EnhancedCode{5, 3, 4})
	}
	// The connection goes on.
	if text, err := send(c, "app@example.com", []string{"ann@example.net"}, messageOfSize(max-1)); err != nil {
		t.Fatalf("a message within the limit after the oversize ones: %q %v", text, err)
	}
	if got := ts.h.messages(); len(got) != 1 || len(got[0].data) != max-1 {
		t.Errorf("submitted %d messages", len(got))
	}
	if n := ts.outcome(submission.OutcomeTooLarge); n != 2 {
		t.Errorf("too_large = %d, want 2", n)
	}
}

// TestShutdownLetsMessagesFinish: a message being submitted gets its 250;
// then every connection is closed and both Serve calls return.
func TestShutdownLetsMessagesFinish(t *testing.T) {
	ts := startServer(t)
	block, entered := make(chan struct{}), make(chan struct{}, 1)
	ts.h.set(func(h *fakeHandler) { h.block, h.entered = block, entered })
	c := ts.dialTLS(t, goodKey)
	idle := ts.dialTLS(t, goodKey)
	result := make(chan error, 1)
	go func() {
		_, err := send(c, "app@example.com", []string{"ann@example.net"}, message("s", "x\r\n"))
		result <- err
	}()
	<-entered
	shut := make(chan error, 1)
	go func() { shut <- ts.srv.Shutdown(context.Background()) }()
	// Shutdown closes the listeners at once.
	poll.Until(t, 10*time.Second, "a new connection is still taken", func() bool {
		_, err := gosmtp.Dial(ts.addr)
		return err != nil
	})
	select {
	case err := <-shut:
		t.Fatalf("Shutdown returned %v before the message was submitted", err)
	default:
	}
	close(block)
	if err := <-result; err != nil {
		t.Fatalf("message during Shutdown: %v", err)
	}
	if err := <-shut; err != nil {
		t.Fatalf("Shutdown: %v", err)
	}
	if err := idle.Noop(); err == nil {
		t.Error("an idle connection outlived Shutdown")
	}
	for range 2 {
		select {
		case err := <-ts.served:
			if !errors.Is(err, submission.ErrServerClosed) {
				t.Errorf("Serve returned %v", err)
			}
			ts.served <- err // for the cleanup
		case <-time.After(10 * time.Second):
			t.Fatal("Serve did not return")
		}
	}
}

func TestServeRequiresTLSAndHandler(t *testing.T) {
	s := &submission.Server{Handler: newFakeHandler()}
	if err := s.Serve(smtpservertest.Listen(t)); err == nil || !strings.Contains(err.Error(), "TLS") {
		t.Errorf("Serve without TLS: %v", err)
	}
	s = &submission.Server{Config: smtpserver.Config{TLS: serverTLS(t)}}
	if err := s.ServeTLS(smtpservertest.Listen(t)); err == nil || !strings.Contains(err.Error(), "Handler") {
		t.Errorf("ServeTLS without Handler: %v", err)
	}
	// Closed before serving: Serve returns at once.
	s = &submission.Server{Handler: newFakeHandler(), Config: smtpserver.Config{TLS: serverTLS(t)}}
	_ = s.Close()
	if err := s.Serve(smtpservertest.Listen(t)); !errors.Is(err, submission.ErrServerClosed) {
		t.Errorf("Serve after Close: %v", err)
	}
}

func serverTLS(t *testing.T) *tls.Config {
	return tlscert.ServerConfig(certificate(t))
}

func TestMetrics(t *testing.T) {
	reg := prometheus.NewRegistry()
	observe := submission.Metrics(reg)
	observe(submission.OutcomeQueued)
	families, err := reg.Gather()
	if err != nil || len(families) != 1 || families[0].GetName() != "mailroom_submission_smtp_total" {
		t.Fatalf("%d families, %v", len(families), err)
	}
	if n := len(families[0].GetMetric()); n != len(submission.Outcomes) {
		t.Errorf("%d series, want one per outcome (%d)", n, len(submission.Outcomes))
	}
	found := false
	for _, m := range families[0].GetMetric() {
		if m.GetLabel()[0].GetValue() == submission.OutcomeQueued {
			found = m.GetCounter().GetValue() == 1
		}
	}
	if !found {
		t.Error(`mailroom_submission_smtp_total{outcome="queued"} is not 1`)
	}
}
