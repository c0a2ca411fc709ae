package e2e

import (
	"crypto/tls"
	"encoding/json"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/emersion/go-sasl"
	gosmtp "github.com/emersion/go-smtp"

	"github.com/mailroom/mailroom/apitest"
	"github.com/mailroom/mailroom/poll"
	"github.com/mailroom/mailroom/storetest"
)

var submissionLine = regexp.MustCompile(`submission SMTP listening.*?tls"?[=:]"?(STARTTLS|implicit TLS)"?.*?addr"?[=:]"?([0-9.:]+)`)

// submissionAddrs are the node's STARTTLS and implicit-TLS submission
// addresses, as it logs them.
func (s *server) submissionAddrs(t *testing.T) (starttls, implicit string) {
	t.Helper()
	poll.Until(t, 10*time.Second, "the submission listeners are up", func() bool {
		for _, m := range submissionLine.FindAllStringSubmatch(s.Stderr(), -1) {
			if m[1] == "STARTTLS" {
				starttls = m[2]
			} else {
				implicit = m[2]
			}
		}
		return starttls != "" && implicit != ""
	})
	return starttls, implicit
}

// submit sends one message through SMTP submission as an application does
// and returns the final reply's text, or the error of the step that failed.
func submit(c *gosmtp.Client, key, from string, rcpts []string, msg string) (string, error) {
	if err := c.Auth(sasl.NewPlainClient("", "anything", key)); err != nil {
		return "", err
	}
	if err := c.Mail(from, nil); err != nil {
		return "", err
	}
	for _, r := range rcpts {
		if err := c.Rcpt(r, nil); err != nil {
			return "", err
		}
	}
	w, err := c.Data()
	if err != nil {
		return "", err
	}
	if _, err := w.Write([]byte(strings.ReplaceAll(msg, "\n", "\r\n"))); err != nil {
		return "", err
	}
	resp, err := w.CloseWithResponse()
	if err != nil {
		return "", err
	}
	return resp.StatusText, nil
}

// An application that speaks only SMTP: STARTTLS, AUTH with a send key, a
// message with a Bcc'd recipient. It arrives for both, without the Bcc
// header, signed, with Message-ID and Date added, the body unchanged, from
// the bounce subdomain, and it is in the log under the id of the 250.
func TestSMTPSubmission(t *testing.T) {
	storetest.Each(t, func(t *testing.T, eng storetest.Engine) {
		w := newWorld(t)
		node, key, _ := w.startAcmeNode(t, eng, "--submission-listen", "127.0.0.1:0", "--submissions-listen", "127.0.0.1:0")
		starttls, implicit := node.submissionAddrs(t)
		tlsConfig := &tls.Config{RootCAs: node.roots(), ServerName: "localhost"}

		c, err := gosmtp.DialStartTLS(starttls, tlsConfig)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		body := "Hello Ann,\n\nyour order is on its way.\n=3D not decoded, kept as written\n"
		msg := "From: Shop <orders@shop.example>\nTo: ann@example.net\nBcc: boss@example.net\nSubject: Shipped\n\n" + body
		text, err := submit(c, key, "orders@shop.example", []string{"ann@example.net", "boss@example.net"}, msg)
		if err != nil {
			t.Fatalf("submit: %v", err)
		}
		id := strings.TrimPrefix(strings.TrimPrefix(text, "2.0.0 "), "queued as ")
		if !strings.HasPrefix(id, "msg_") {
			t.Fatalf("250 text %q", text)
		}
		got := w.mx.WaitMessages(t, 1, 30*time.Second)[0]
		data := string(got.Data)
		if len(got.Rcpts) != 2 || strings.Contains(data, "\r\nBcc:") || !strings.Contains(data, "DKIM-Signature:") ||
			!strings.Contains(data, "\r\nMessage-ID: <") || !strings.Contains(data, "\r\nDate: ") ||
			!strings.HasSuffix(data, strings.ReplaceAll(body, "\n", "\r\n")) || !strings.HasSuffix(got.MailFrom, "@bounces.shop.example") {
			t.Fatalf("received: rcpts %v, mail from %s:\n%s", got.Rcpts, got.MailFrom, data)
		}
		if r := node.client.Do(apitest.Request{Method: "GET", Path: "/v1/messages/" + id, Key: key}); r.Status != 200 {
			t.Fatalf("the log has no %s: %d %s", id, r.Status, r.Body)
		}

		// Implicit TLS on the second port, to an address whose local part
		// must be quoted (RFC 5321 §4.1.2): it keeps its quotes into the
		// log and the RCPT TO that delivers it (the sink, go-smtp, hands
		// its recipients on unquoted, and would refuse the path unquoted).
		c2, err := gosmtp.DialTLS(implicit, tlsConfig)
		if err != nil {
			t.Fatal(err)
		}
		defer c2.Close()
		text, err = submit(c2, key, "orders@shop.example", []string{`"ann smith"@example.net`},
			"From: orders@shop.example\nTo: \"ann smith\"@example.net\nSubject: Again\n\nHi\n")
		if err != nil {
			t.Fatalf("implicit TLS, a quoted local part: %v", err)
		}
		id = strings.TrimPrefix(text, "2.0.0 queued as ")
		if got := w.mx.WaitMessages(t, 2, 30*time.Second)[1]; len(got.Rcpts) != 1 || got.Rcpts[0] != "ann smith@example.net" {
			t.Errorf("delivered to %q, want the quoted local part the sink reads as ann smith", got.Rcpts)
		}
		var logged struct{ Recipients []struct{ Address string } }
		if r := node.client.Do(apitest.Request{Method: "GET", Path: "/v1/messages/" + id, Key: key}); r.Status != 200 || json.Unmarshal(r.Body, &logged) != nil ||
			len(logged.Recipients) != 1 || logged.Recipients[0].Address != `"ann smith"@example.net` {
			t.Errorf("the log's recipients of %s: %d %s, want \"ann smith\"@example.net", id, r.Status, r.Body)
		}

		// Refusals.
		c3, err := gosmtp.DialStartTLS(starttls, tlsConfig)
		if err != nil {
			t.Fatal(err)
		}
		defer c3.Close()
		if err := c3.Mail("orders@shop.example", nil); !hasCode(err, 530) {
			t.Errorf("MAIL before AUTH: %v", err)
		}
		if err := c3.Auth(sasl.NewPlainClient("", "x", key+"x")); !hasCode(err, 535) {
			t.Errorf("a wrong key: %v", err)
		}
		if _, err := submit(c3, key, "orders@unverified.example", []string{"ann@example.net"}, "From: orders@shop.example\nSubject: x\n\nx\n"); !hasCode(err, 550) {
			t.Errorf("an unverified envelope domain: %v", err)
		}
		c4, err := gosmtp.Dial(starttls)
		if err != nil {
			t.Fatal(err)
		}
		defer c4.Close()
		if err := c4.Auth(sasl.NewPlainClient("", "x", key)); err == nil {
			t.Error("AUTH before STARTTLS succeeded")
		}
	})
}

func hasCode(err error, code int) bool {
	e, ok := err.(*gosmtp.SMTPError)
	return ok && e.Code == code
}
