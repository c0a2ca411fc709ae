package inbound_test

import (
	"strings"
	"testing"
	"time"

	"github.com/mailroom/mailroom"
	"github.com/mailroom/mailroom/inbound"
	"github.com/mailroom/mailroom/smtpserver"
	"github.com/mailroom/mailroom/smtpserver/smtpservertest"
	"github.com/mailroom/mailroom/storetest"
)

// TestRCPTRepliesTellNothingDNSDoesNot: on the MX with the Reports service
// on each engine's store, RCPT is taken only at the bounce subdomain of a
// domain that can send (verified, or in its grace period), whose MX
// record is public in DNS; every other recipient (a domain nobody added,
// one added but not verified or failed, the domain itself) gets the same
// bytes, so that the MX does not tell which
// domains accounts have added.
func TestRCPTRepliesTellNothingDNSDoesNot(t *testing.T) {
	storetest.Each(t, func(t *testing.T, e storetest.Engine) {
		s := e.Open(t)
		acct := storetest.NewAccount(t, s, "acme")
		for name, status := range map[string]mailroom.DomainStatus{
			"verified.example": mailroom.DomainVerified, "grace.example": mailroom.DomainTemporaryFailure,
			"pending.example": mailroom.DomainPending, "failed.example": mailroom.DomainFailed,
		} {
			d := storetest.NewDomain(acct, name, time.Now())
			d.Status = status
			if err := s.CreateDomain(t.Context(), d, mailroom.DefaultMaxDomains); err != nil {
				t.Fatal(err)
			}
		}
		srv := &inbound.Server{
			Handler: &inbound.Reports{Store: s, ReturnPaths: inbound.ReturnPaths{Key: []byte("k")}, Now: time.Now},
			Config:  smtpserver.Config{Hostname: "mx.test", Log: (&smtpservertest.Log{}).Logger()},
		}
		addr := smtpservertest.Serve(t, srv.Close, srv.Serve).Addrs[0]

		c := smtpservertest.Dial(t, addr)
		c.Expect("220 ")
		c.Send("EHLO sender.test\r\n")
		c.Expect("250 ")
		c.Send("MAIL FROM:<>\r\n")
		c.Expect("250 ")
		rcpt := func(to string) string {
			t.Helper()
			c.Send("RCPT TO:<" + to + ">\r\n")
			line, err := c.Reply(10 * time.Second)
			if err != nil {
				t.Fatalf("RCPT %s: %v", to, err)
			}
			return line
		}
		for _, to := range []string{"b-x@bounces.verified.example", "b-x@bounces.grace.example"} {
			if got := rcpt(to); !strings.HasPrefix(got, "250 ") {
				t.Errorf("RCPT %s: %q, want 250", to, got)
			}
		}
		want := rcpt("b-x@bounces.nobody.example")
		if !strings.HasPrefix(want, "550 ") {
			t.Fatalf("RCPT for a domain nobody added: %q, want 550", want)
		}
		for _, to := range []string{
			"b-x@bounces.pending.example", "b-x@bounces.failed.example",
			"unsubscribe-x@bounces.pending.example", "ann@verified.example",
		} {
			if got := rcpt(to); got != want {
				t.Errorf("RCPT %s: %q, want the same bytes as for a domain nobody added, %q", to, got, want)
			}
		}
	})
}
