package e2e

import (
	"crypto/tls"
	"strings"
	"testing"
	"time"

	"github.com/emersion/go-sasl"
	gosmtp "github.com/emersion/go-smtp"

	"github.com/mailroom/mailroom/storetest"
)

// One misconfigured worker behind a NAT sends wrong keys over SMTP
// submission; another process at the same address, with the right key,
// still logs in (after a delay of a few seconds at most) and its message
// arrives. The metrics count every failure and the delayed logins.
func TestSMTPRightKeyAfterWrongKeysFromTheSameAddress(t *testing.T) {
	w := newWorld(t)
	node, key, _ := w.startAcmeNode(t, storetest.SQLite, "--submission-listen", "127.0.0.1:0", "--submissions-listen", "127.0.0.1:0")
	starttls, _ := node.submissionAddrs(t)
	tlsConfig := &tls.Config{RootCAs: node.roots(), ServerName: "localhost"}

	const wrong = 7
	for i := range wrong {
		c, err := gosmtp.DialStartTLS(starttls, tlsConfig)
		if err != nil {
			t.Fatal(err)
		}
		err = c.Auth(sasl.NewPlainClient("", "worker", "mailroom_0000000000000000_wrongwrongwrongwrongwrongwrongwrongwrongwro"))
		if e, ok := err.(*gosmtp.SMTPError); !ok || e.Code != 535 {
			t.Fatalf("wrong key %d: %v, want 535", i+1, err)
		}
		_ = c.Close()
	}

	c, err := gosmtp.DialStartTLS(starttls, tlsConfig)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	start := time.Now()
	text, err := submit(c, key, "orders@shop.example", []string{"ann@example.net"},
		"From: orders@shop.example\nTo: ann@example.net\nSubject: Still here\n\nHi\n")
	if err != nil {
		t.Fatalf("the right key after %d wrong ones from the address: %v", wrong, err)
	}
	t.Logf("the right key's login and message took %v after %d failures", time.Since(start), wrong)
	if !strings.Contains(text, "queued as msg_") {
		t.Errorf("250 text %q", text)
	}
	if got := w.mx.WaitMessages(t, 1, 30*time.Second); len(got) != 1 || got[0].Rcpts[0] != "ann@example.net" {
		t.Errorf("received %+v", got)
	}
	m := node.metrics(t)
	for _, want := range []string{
		`mailroom_submission_smtp_total{outcome="auth_failed"} 7`,
		`mailroom_submission_smtp_total{outcome="auth_ok"} 1`,
		`mailroom_submission_smtp_total{outcome="auth_limited"} 3`,
	} {
		if !strings.Contains(m, want) {
			t.Errorf("metrics lack %s:\n%s", want, grepLines(m, "mailroom_submission_smtp_total"))
		}
	}
}
