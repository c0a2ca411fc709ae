package e2e

import (
	"fmt"
	"maps"
	"net/smtp"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mailroom/mailroom/apitest"
	"github.com/mailroom/mailroom/poll"
	"github.com/mailroom/mailroom/storetest"
)

var inboundLine = regexp.MustCompile(`inbound SMTP listening.*?addr"?[=:]"?([0-9.:]+)`)

// inboundAddr is the address a node's return-path MX listens on, as it logs it.
func (s *server) inboundAddr(t *testing.T) string {
	t.Helper()
	var addr string
	poll.Until(t, 10*time.Second, "the inbound listener is up", func() bool {
		m := inboundLine.FindStringSubmatch(s.Stderr())
		if m != nil {
			addr = strings.Trim(m[1], `"`)
		}
		return m != nil
	})
	return addr
}

// deliverReport sends a report to the MX at addr as a receiving MTA does:
// from the null sender, to rcpt.
func deliverReport(addr, rcpt, body string) error {
	c, err := smtp.Dial(addr)
	if err != nil {
		return err
	}
	defer c.Close()
	if err := c.Hello("mx.example.net"); err != nil {
		return err
	}
	if err := c.Mail(""); err != nil {
		return err
	}
	if err := c.Rcpt(rcpt); err != nil {
		return err
	}
	w, err := c.Data()
	if err != nil {
		return err
	}
	if _, err := w.Write([]byte(strings.ReplaceAll(body, "\n", "\r\n"))); err != nil {
		return err
	}
	if err := w.Close(); err != nil {
		return err
	}
	return c.Quit()
}

// postfixDSN is a DSN in the form Postfix writes, for rcpt.
func postfixDSN(rcpt, status, action, diag string) string {
	return fmt.Sprintf(`From: MAILER-DAEMON@mx.example.net (Mail Delivery System)
Subject: Undelivered Mail Returned to Sender
To: someone@bounces.shop.example
Auto-Submitted: auto-replied
MIME-Version: 1.0
Content-Type: multipart/report; report-type=delivery-status; boundary="B1"

--B1
Content-Type: text/plain; charset=us-ascii

This is the mail system at host mx.example.net. I'm sorry to have to inform you that your message could not be delivered.

--B1
Content-Type: message/delivery-status

Reporting-MTA: dns; mx.example.net
Arrival-Date: Mon, 23 Nov 2026 10:00:00 +0000

Final-Recipient: rfc822; %s
Original-Recipient: rfc822;%s
Action: %s
Status: %s
Remote-MTA: dns; mailbox.example.net
Diagnostic-Code: smtp; %s

--B1--
`, rcpt, rcpt, action, status, diag)
}

// A bounce that comes after the message was delivered, as a new user sees
// it: the recipient turns bounced, the address is suppressed, and
// email.bounced arrives; a delayed DSN, a tampered token and a vacation
// reply change nothing; mail to an unknown domain is refused at RCPT.
func TestLateBouncesThroughTheInboundMX(t *testing.T) {
	storetest.Each(t, func(t *testing.T, eng storetest.Engine) {
		w := newWorld(t)
		node, key, _ := w.startAcmeNode(t, eng, "--inbound-listen", "127.0.0.1:0")
		mx := node.inboundAddr(t)
		c := node.client
		r := c.Do(apitest.Request{Method: "POST", Path: "/v1/send", Key: key, Body: map[string]any{
			"from": "orders@shop.example", "to": "ann@example.net", "subject": "Order", "text": "Thanks"}})
		if r.Status != 200 {
			t.Fatalf("send: %d %s", r.Status, r.Body)
		}
		id := r.Str("messageId")
		got := w.mx.WaitMessages(t, 1, 30*time.Second)[0]
		verp := got.MailFrom
		if !strings.HasSuffix(verp, "@bounces.shop.example") {
			t.Fatalf("envelope sender %q", verp)
		}
		status := func() string {
			var rs []string
			poll.Until(t, 10*time.Second, "the log answers", func() bool {
				m := c.Do(apitest.Request{Method: "GET", Path: "/v1/messages/" + id, Key: key}).Map()
				rec, ok := m["recipients"].([]any)
				if !ok || len(rec) == 0 {
					return false
				}
				rs = []string{fmt.Sprint(rec[0].(map[string]any)["status"])}
				return true
			})
			return rs[0]
		}
		poll.Until(t, 30*time.Second, "delivered", func() bool { return status() == "delivered" })

		// Refused at RCPT: another domain, and the sending domain itself.
		for _, rcpt := range []string{"x@bounces.other.example", "ann@shop.example"} {
			err := deliverReport(mx, rcpt, postfixDSN("ann@example.net", "5.1.1", "failed", "550 5.1.1 user unknown"))
			if err == nil || !strings.Contains(err.Error(), "550") {
				t.Errorf("a report to %s: %v, want 550 at RCPT", rcpt, err)
			}
		}
		// Changes nothing: a delay, a tampered token, a vacation reply.
		if err := deliverReport(mx, verp, postfixDSN("ann@example.net", "4.4.7", "delayed", "451 4.4.7 try later")); err != nil {
			t.Fatal(err)
		}
		// The last character of the mac changed.
		at := strings.LastIndexByte(verp, '@')
		last := "a"
		if verp[at-1] == 'a' {
			last = "b"
		}
		tampered := verp[:at-1] + last + verp[at:]
		if err := deliverReport(mx, tampered, postfixDSN("ann@example.net", "5.1.1", "failed", "550 5.1.1 user unknown")); err != nil {
			t.Fatal(err)
		}
		vacation := "From: ann@example.net\nTo: " + verp + "\nSubject: Out of office\nAuto-Submitted: auto-replied\n\nI am away until Monday.\n"
		if err := deliverReport(mx, verp, vacation); err != nil {
			t.Fatal(err)
		}
		if s := status(); s != "delivered" {
			t.Fatalf("after a delay, a tampered token and a vacation reply: %s", s)
		}
		if r := c.Do(apitest.Request{Method: "GET", Path: "/v1/suppressions/ann@example.net", Key: key}); r.Status != 404 {
			t.Fatalf("suppressed already: %d %s", r.Status, r.Body)
		}

		// The late bounce.
		if err := deliverReport(mx, verp, postfixDSN("ann@example.net", "5.1.1", "failed", "550 5.1.1 <ann@example.net>: Recipient address rejected: User unknown")); err != nil {
			t.Fatal(err)
		}
		poll.Until(t, 10*time.Second, "the recipient turns bounced", func() bool { return status() == "bounced" })
		if r := c.Do(apitest.Request{Method: "GET", Path: "/v1/suppressions/ann@example.net", Key: key}); r.Status != 200 || r.Str("reason") != "hard_bounce" {
			t.Fatalf("suppression: %d %s", r.Status, r.Body)
		}
		ev := c.Do(apitest.Request{Method: "GET", Path: "/v1/events?type=email.bounced&messageId=" + id, Key: key})
		if !strings.Contains(string(ev.Body), `"async":true`) || !strings.Contains(string(ev.Body), `"bounceType":"hard"`) {
			t.Fatalf("email.bounced: %s", ev.Body)
		}
	})
}

// arfReport is an abuse report (RFC 5965) about the message whose
// Message-ID is messageID, naming rcpt in Original-Rcpt-To.
func arfReport(messageID, rcpt string) string {
	return fmt.Sprintf(`From: Feedback Loop <fbl@example.net>
Subject: Abuse report
Auto-Submitted: auto-generated
MIME-Version: 1.0
Content-Type: multipart/report; report-type=feedback-report; boundary="F1"

--F1
Content-Type: text/plain

This is an abuse report.

--F1
Content-Type: message/feedback-report

Feedback-Type: abuse
User-Agent: ExampleFBL/1.0
Version: 1
Original-Rcpt-To: <%s>

--F1
Content-Type: text/rfc822-headers

From: orders@shop.example
To: %s
Subject: Order
Message-ID: %s

--F1--
`, rcpt, rcpt, messageID)
}

// A recipient who reads the Return-Path of its copy cannot make a Cc at
// another domain bounced or complained, nor does a good token count at
// another domain's bounce subdomain (issue 27); the receiving server's own
// DSN still bounces its recipient.
func TestCoRecipientCannotReportAnother(t *testing.T) {
	storetest.Each(t, func(t *testing.T, eng storetest.Engine) {
		w := newWorld(t)
		w.dns.SetMX("example.org", 10, "mx.example.net")
		node, key, _ := w.startAcmeNode(t, eng, "--inbound-listen", "127.0.0.1:0")
		w.verifyDomain(t, node.client, key, "two.example")
		mx := node.inboundAddr(t)
		c := node.client
		r := c.Do(apitest.Request{Method: "POST", Path: "/v1/send", Key: key, Body: map[string]any{
			"from": "orders@shop.example", "to": []string{"ann@example.net", "bob@example.net"}, "cc": []string{"carol@example.org"},
			"subject": "Order", "text": "Thanks"}})
		if r.Status != 200 {
			t.Fatalf("send: %d %s", r.Status, r.Body)
		}
		id := r.Str("messageId")
		returnPath, messageID := map[string]string{}, ""
		for _, m := range w.mx.WaitMessages(t, 2, 30*time.Second) {
			for _, rcpt := range m.Rcpts {
				returnPath[rcpt] = m.MailFrom
			}
			messageID = messageIDOf(m.Data)
		}
		annRP := returnPath["ann@example.net"]
		if annRP == "" || annRP == returnPath["carol@example.org"] || !strings.HasSuffix(annRP, "@bounces.shop.example") {
			t.Fatalf("return paths %v", returnPath)
		}
		status := func() map[string]string {
			out := map[string]string{}
			m := c.Do(apitest.Request{Method: "GET", Path: "/v1/messages/" + id, Key: key}).Map()
			rec, _ := m["recipients"].([]any)
			for _, x := range rec {
				r := x.(map[string]any)
				out[fmt.Sprint(r["address"])] = fmt.Sprint(r["status"])
			}
			return out
		}
		poll.Until(t, 30*time.Second, "delivered", func() bool {
			s := status()
			return len(s) == 3 && !slices.ContainsFunc(slices.Collect(maps.Values(s)), func(v string) bool { return v != "delivered" })
		})

		// ann's Return-Path, naming carol: a DSN and an abuse report. The
		// same token at another domain's bounce subdomain, naming ann.
		elsewhere := strings.Replace(annRP, "@bounces.shop.example", "@bounces.two.example", 1)
		for _, rep := range []struct{ to, body string }{
			{annRP, postfixDSN("carol@example.org", "5.1.1", "failed", "550 5.1.1 user unknown")},
			{annRP, arfReport(messageID, "carol@example.org")},
			{elsewhere, postfixDSN("ann@example.net", "5.1.1", "failed", "550 5.1.1 user unknown")},
			{elsewhere, arfReport(messageID, "bob@example.net")},
		} {
			if err := deliverReport(mx, rep.to, rep.body); err != nil {
				t.Fatalf("report to %s: %v", rep.to, err)
			}
		}
		// The legitimate bounce of bob, through the same return path, after
		// the forgeries: when it shows, they have been applied too.
		if err := deliverReport(mx, annRP, postfixDSN("bob@example.net", "5.1.1", "failed", "550 5.1.1 user unknown")); err != nil {
			t.Fatal(err)
		}
		poll.Until(t, 10*time.Second, "bob turns bounced", func() bool { return status()["bob@example.net"] == "bounced" })
		if s := status(); s["carol@example.org"] != "delivered" || s["ann@example.net"] != "delivered" {
			t.Fatalf("after forged reports: %v", s)
		}
		for _, a := range []string{"carol@example.org", "ann@example.net"} {
			if r := c.Do(apitest.Request{Method: "GET", Path: "/v1/suppressions/" + a, Key: key}); r.Status != 404 {
				t.Fatalf("%s was suppressed: %d %s", a, r.Status, r.Body)
			}
		}
	})
}
