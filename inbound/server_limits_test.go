package inbound_test

import (
	"fmt"
	"maps"
	"strings"
	"testing"
	"time"

	"github.com/mailroom/mailroom/inbound"
	"github.com/mailroom/mailroom/poll"
	"github.com/mailroom/mailroom/smtpserver"
	"github.com/mailroom/mailroom/smtpserver/smtpservertest"
)

// TestServerThousandConnectionsFromOneAddress: only MaxConnsPerIP are
// served at once; the rest are answered 421 at once and closed, and the
// server serves normally afterwards, holding no more goroutines than
// before.
func TestServerThousandConnectionsFromOneAddress(t *testing.T) {
	const total, perIP = 1000, smtpserver.DefaultMaxConnsPerIP
	ts := startServer(t)
	rcpt := []string{"bounce-1@" + bounceDomain}

	// Warm up (the first connection starts what stays), then count.
	warm := dial(t, ts.addr)
	if err := send(warm, rcpt, message("warm-up", "x\r\n")); err != nil {
		t.Fatal(err)
	}
	if err := warm.Quit(); err != nil {
		t.Fatal(err)
	}
	baseline := smtpservertest.Settle(t, ts.addr)

	held := smtpservertest.Hold(t, ts.addr, perIP)

	refusedBefore := ts.outcome(inbound.OutcomeConnRefused)
	smtpservertest.RefuseAll(t, total-perIP, func(int) (bool, string) {
		line, err := smtpservertest.Greeting(ts.addr)
		return err == nil && strings.HasPrefix(line, "421 4.7.0 "), fmt.Sprintf("%q %v", line, err)
	})
	if n := ts.outcome(inbound.OutcomeConnRefused) - refusedBefore; n != total-perIP {
		t.Errorf("conn_refused = %d, want %d", n, total-perIP)
	}

	// The connections held are served all along.
	h := held[0]
	h.Send("EHLO sender.test\r\n")
	h.Expect("250 ")
	h.Send("NOOP\r\n")
	h.Expect("250 ")

	// Once they go, the address is served again.
	for _, c := range held {
		c.Send("QUIT\r\n")
		c.Expect("221 ")
		_ = c.Close()
	}
	smtpservertest.Settle(t, ts.addr)
	c := dial(t, ts.addr)
	if err := send(c, rcpt, message("after", "x\r\n")); err != nil {
		t.Fatalf("message after the flood: %v", err)
	}
	_ = c.Quit()

	smtpservertest.GoroutinesBack(t, baseline)
}

func TestServerMaxConnsOverall(t *testing.T) {
	ts := startServer(t, func(s *inbound.Server) { s.MaxConns = 3 })
	for range 3 {
		smtpservertest.Dial(t, ts.addr).Expect("220 ")
	}
	c := smtpservertest.Dial(t, ts.addr)
	c.Expect("421 4.7.0 ")
	if _, _, err := c.ClosedWithin(5 * time.Second); err != nil {
		t.Errorf("refused connection not closed: %v", err)
	}
}

func TestServerCutsIdleClientAfterReadTimeout(t *testing.T) {
	const timeout = 300 * time.Millisecond
	ts := startServer(t, func(s *inbound.Server) { s.ReadTimeout = timeout })

	// Silent from the start.
	smtpservertest.IdleIsCut(t, ts.addr, timeout)

	// Silent in the middle of a transaction.
	c := smtpservertest.Dial(t, ts.addr)
	c.Expect("220 ")
	c.Send("EHLO sender.test\r\nMAIL FROM:<>\r\nRCPT TO:<bounce-1@" + bounceDomain + ">\r\n")
	c.Expect("250 ")
	c.Expect("250 ")
	c.Expect("250 ")
	if _, _, err := c.ClosedWithin(10 * time.Second); err != nil {
		t.Fatalf("client idle mid-transaction not disconnected: %v", err)
	}
}

func TestServerCutsDataThatNeverEnds(t *testing.T) {
	ts := startServer(t, func(s *inbound.Server) {
		s.ReadTimeout = 300 * time.Millisecond
		s.DataTimeout = time.Second
	})
	begin := func() *smtpservertest.Conn {
		c := smtpservertest.Dial(t, ts.addr)
		c.Expect("220 ")
		c.Send("EHLO sender.test\r\nMAIL FROM:<>\r\nRCPT TO:<bounce-1@" + bounceDomain + ">\r\nDATA\r\n")
		c.Expect("250 ")
		c.Expect("250 ")
		c.Expect("250 ")
		c.Expect("354 ")
		c.Send("Subject: never ends\r\n\r\n")
		return c
	}

	// A client that stops sending is cut after the read timeout.
	c := begin()
	took, rest, err := c.ClosedWithin(10 * time.Second)
	if err != nil {
		t.Fatalf("stalled DATA not cut: %v", err)
	}
	if !strings.HasPrefix(rest, "421 4.4.2") {
		t.Errorf("server said %q, want 421 4.4.2", rest)
	}
	t.Logf("stalled DATA cut after %v", took)

	// A client that trickles for ever is cut at the DATA timeout. It sends
	// enough to keep each read within the read timeout: 8 KiB per tick.
	chunk := []byte(strings.Repeat(strings.Repeat("x", 98)+"\r\n", 80))
	c = begin()
	defer c.Trickle(chunk, 50*time.Millisecond)()
	took, rest, err = c.ClosedWithin(10 * time.Second)
	// The server closes with the client's input unread, which the kernel
	// may answer with a reset that loses the 421 on the way.
	if err != nil && !smtpservertest.IsReset(err) {
		t.Fatalf("trickling DATA not cut: %v", err)
	}
	if took < 500*time.Millisecond {
		t.Errorf("trickling DATA cut after %v, before the DATA timeout", took)
	}
	if err == nil && !strings.Contains(rest, "421 4.4.2") {
		t.Errorf("server said %q, want 421 4.4.2", rest)
	}
	t.Logf("trickling DATA cut after %v", took)

	if n := len(ts.h.appliedReports()); n != 0 {
		t.Errorf("%d reports applied from cut messages", n)
	}
	poll.Until(t, 5*time.Second, "aborted not counted twice", func() bool {
		return ts.outcome(inbound.OutcomeAborted) == 2
	})
}

// TestServerSurvivesMalformedInput sends what no honest client does; the
// server answers, or closes, and goes on serving.
func TestServerSurvivesMalformedInput(t *testing.T) {
	ts := startServer(t, func(s *inbound.Server) {
		s.ReadTimeout = 500 * time.Millisecond
		s.MaxBytes = 64 << 10
	})
	rcptLine := "RCPT TO:<bounce-1@" + bounceDomain + ">"
	tx := "MAIL FROM:<>\r\n" + rcptLine + "\r\n"
	inputs := smtpservertest.MalformedInputs(tx)
	maps.Copy(inputs, map[string]string{
		"bare LF commands": "EHLO sender.test\nMAIL FROM:<>\n" + rcptLine + "\nRSET\nQUIT\n",
		"unknown commands": "FOO\r\nBAR baz\r\nSTARTTLS\r\nAUTH LOGIN\r\nVRFY root\r\nEXPN all\r\n",
		"broken addresses": "EHLO x\r\nMAIL FROM:<<>>\r\nMAIL FROM:<a@b\r\nMAIL FROM:<> BODY=WHAT\r\nMAIL FROM:<>\r\nRCPT TO:<>\r\nRCPT TO:<\"\\\x00\"@[300.1.1.1]>\r\nRCPT TO:<@a,@b:c@" + bounceDomain + ">\r\n",
		"BDAT then EHLO":   "EHLO x\r\n" + tx + "BDAT 5\r\nabcdeEHLO y\r\nMAIL FROM:<>\r\nQUIT\r\n",
		"nested MAIL":      "EHLO x\r\n" + tx + "MAIL FROM:<a@b>\r\nDATA\r\nX-Test: nested\r\n\r\n.\r\nQUIT\r\n",
	})
	for name, input := range inputs {
		t.Run(name, func(t *testing.T) {
			c := smtpservertest.Dial(t, ts.addr)
			c.Expect("220 ")
			c.SendMalformed(name, input)
		})
	}

	// Still serving.
	c := dial(t, ts.addr)
	if err := send(c, []string{"bounce-1@" + bounceDomain}, message("after-garbage", "x\r\n")); err != nil {
		t.Fatalf("message after malformed input: %v", err)
	}
	found := false
	for _, a := range ts.h.appliedReports() {
		found = found || a.report.Text == "after-garbage"
	}
	if !found {
		t.Error("the message after the malformed input was not applied")
	}
}

// TestMessageEndedNextToABareLFIsRefusedAtOnce: a sender that ends its
// message with a line "." next to a bare LF is answered 500 5.5.2 at once
// and disconnected, rather than left waiting for the read timeout, and no
// report is applied.
func TestMessageEndedNextToABareLFIsRefusedAtOnce(t *testing.T) {
	ts := startServer(t)
	for name, message := range smtpservertest.BareLFEnds {
		t.Run(name, func(t *testing.T) {
			c := smtpservertest.Dial(t, ts.addr)
			c.Expect("220 ")
			c.Send("EHLO sender.test\r\nMAIL FROM:<>\r\nRCPT TO:<bounce-1@" + bounceDomain + ">\r\nDATA\r\n")
			c.Expect("250 ")
			c.Expect("250 ")
			c.Expect("250 ")
			c.Expect("354 ")
			c.ExpectBareLFRefused(message)
		})
	}
	if got := ts.h.appliedReports(); len(got) != 0 {
		t.Errorf("%d reports applied", len(got))
	}
}
