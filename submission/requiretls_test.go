package submission_test

import (
	"slices"
	"strings"
	"testing"

	gosmtp "github.com/emersion/go-smtp"

	"github.com/mailroom/mailroom/smtpserver/smtpservertest"
)

// Over TLS the server advertises REQUIRETLS and MAIL FROM … REQUIRETLS
// reaches Submit (RFC 8689 §4.1); a transaction without it does not ask
// for it.
func TestRequireTLSOverTLS(t *testing.T) {
	ts := startServer(t)
	c := ts.dialTLS(t, goodKey)
	if ok, _ := c.Extension("REQUIRETLS"); !ok {
		t.Fatal("REQUIRETLS is not advertised over TLS")
	}
	if err := c.Mail("app@example.com", &gosmtp.MailOptions{RequireTLS: true}); err != nil {
		t.Fatalf("MAIL FROM REQUIRETLS: %v", err)
	}
	if err := c.Rcpt("ann@example.net", nil); err != nil {
		t.Fatal(err)
	}
	if _, err := data(c, message("strict", "Hi")); err != nil {
		t.Fatal(err)
	}
	if _, err := send(c, "app@example.com", []string{"bob@example.net"}, message("plain", "Hi")); err != nil {
		t.Fatal(err)
	}
	got := ts.h.messages()
	if len(got) != 2 || !got[0].requireTLS || got[1].requireTLS {
		t.Fatalf("Submit saw %+v; want REQUIRETLS on the first message alone", got)
	}
}

// In clear text REQUIRETLS is not advertised, and the parameter sent
// anyway is refused with 530 5.7.10: a message that must never travel in
// clear may not come in clear either.
func TestRequireTLSInClearRefused(t *testing.T) {
	ts := startServer(t)
	c := smtpservertest.Dial(t, ts.addr)
	c.Expect("220 ")
	c.Send("EHLO client.test\r\n")
	if lines := c.ReplyLines(); slices.ContainsFunc(lines, func(l string) bool { return strings.Contains(l, "REQUIRETLS") }) {
		t.Fatalf("REQUIRETLS advertised in clear: %q", lines)
	}
	c.Send("MAIL FROM:<app@example.com> REQUIRETLS\r\n")
	if reply := c.Expect("530 "); !strings.Contains(reply, "5.7.10") || !strings.Contains(reply, "STARTTLS") {
		t.Fatalf("MAIL FROM REQUIRETLS in clear: %q", reply)
	}
	if got := ts.h.messages(); len(got) != 0 {
		t.Fatalf("Submit saw %+v", got)
	}
}
