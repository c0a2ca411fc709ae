package smtp

import (
	"context"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/mailroom/mailroom"
	"github.com/mailroom/mailroom/dns"
	"github.com/mailroom/mailroom/dns/dnstest"
)

// ehloName is the hostname the transports under test introduce themselves
// with.
const ehloName = "out.mailroom.test"

// testTimeout bounds every delivery and every wait of these tests; nothing
// here should come near it.
const testTimeout = 10 * time.Second

// newDirect is a Direct that asks dnsSrv and dials port, closed when the
// test ends.
func newDirect(t *testing.T, dnsSrv *dnstest.Server, port int) *Direct {
	t.Helper()
	d := NewDirect(newResolver(dnsSrv), ehloName)
	d.Port = port
	t.Cleanup(func() { _ = d.Close() })
	return d
}

func newResolver(dnsSrv *dnstest.Server) *dns.Resolver {
	return &dns.Resolver{Server: dnsSrv.Addr(), Timeout: 2 * time.Second}
}

// publishMX makes domain's mail go to mx, which resolves to ip.
func publishMX(dnsSrv *dnstest.Server, domain string, pref uint16, mx, ip string) {
	dnsSrv.SetMX(domain, pref, mx)
	dnsSrv.SetA(mx, ip)
}

// message is a small RFC 5322 message with CRLF line ends, including a line
// that starts with a dot, which must survive dot-stuffing (RFC 5321 §4.5.2).
func message(subject string) []byte {
	return []byte("From: Sender <sender@mailroom.test>\r\n" +
		"To: someone@example.test\r\n" +
		"Subject: " + subject + "\r\n" +
		"Message-ID: <" + strings.ReplaceAll(subject, " ", "-") + "@mailroom.test>\r\n" +
		"\r\n" +
		"Hello.\r\n" +
		".leading dot\r\n" +
		"..two dots\r\n" +
		".\r\n" +
		"Bye.\r\n")
}

func delivery(domain string, rcpts ...string) *mailroom.Delivery {
	return &mailroom.Delivery{
		MessageID:  "msg-" + domain,
		Domain:     domain,
		MailFrom:   "bounce+tok123@bounces.mailroom.test",
		Recipients: rcpts,
		Data:       message("to " + domain),
	}
}

// deliver runs one delivery with a deadline well above what it needs.
func deliver(t *testing.T, tr mailroom.Transport, d *mailroom.Delivery) []mailroom.RecipientResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	res := tr.Deliver(ctx, d)
	if len(res) != len(d.Recipients) {
		t.Fatalf("got %d results for %d recipients", len(res), len(d.Recipients))
	}
	for i, r := range res {
		if r.Recipient != d.Recipients[i] {
			t.Fatalf("result %d is for %q, want %q", i, r.Recipient, d.Recipients[i])
		}
	}
	return res
}

// deliverAsync runs a delivery in its own goroutine; the results arrive on
// the channel.
func deliverAsync(tr mailroom.Transport, d *mailroom.Delivery) <-chan []mailroom.RecipientResult {
	out := make(chan []mailroom.RecipientResult, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
		defer cancel()
		out <- tr.Deliver(ctx, d)
	}()
	return out
}

// want checks one result's outcome, code and enhanced code, and that its
// response contains text.
func want(t *testing.T, got mailroom.RecipientResult, outcome mailroom.Outcome, code int, enhanced, text string) {
	t.Helper()
	if got.Outcome != outcome || got.Code != code || got.Enhanced != enhanced || !strings.Contains(got.Response, text) {
		t.Errorf("%s: got %s %d %q %q, want %s %d %q containing %q",
			got.Recipient, outcomeName(got.Outcome), got.Code, got.Enhanced, got.Response,
			outcomeName(outcome), code, enhanced, text)
	}
}

func outcomeName(o mailroom.Outcome) string { return o.String() }

// closedPort is a port on 127.0.0.1 where nothing listens.
func closedPort(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	return port
}
