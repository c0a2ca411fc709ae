package submission_test

import (
	"crypto/tls"
	"fmt"
	"maps"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/mailroom/mailroom/poll"
	"github.com/mailroom/mailroom/smtpserver"
	"github.com/mailroom/mailroom/smtpserver/smtpservertest"
	"github.com/mailroom/mailroom/submission"
)

// TestThousandConnectionsFromOneAddress: only MaxConnsPerIP are served at
// once, over both ports; the rest are refused at once (421 on the
// STARTTLS port, closed on the TLS port), and the server serves normally
// afterwards, holding no more goroutines than before.
func TestThousandConnectionsFromOneAddress(t *testing.T) {
	const total, perIP = 1000, smtpserver.DefaultMaxConnsPerIP
	ts := startServer(t)

	// Warm up (the first connection starts what stays), then count.
	warm := ts.dialTLS(t, goodKey)
	if _, err := send(warm, "app@example.com", []string{"ann@example.net"}, message("warm", "x\r\n")); err != nil {
		t.Fatal(err)
	}
	if err := warm.Quit(); err != nil {
		t.Fatal(err)
	}
	baseline := smtpservertest.Settle(t, ts.addr)

	// Half the slots on each port.
	held := smtpservertest.Hold(t, ts.addr, perIP/2)
	var heldTLS []net.Conn
	for len(heldTLS) < perIP-perIP/2 {
		c, err := tlsGreeting(ts)
		if err != nil {
			t.Fatalf("implicit TLS connection %d: %v", len(heldTLS), err)
		}
		heldTLS = append(heldTLS, c)
	}

	refusedBefore := ts.outcome(submission.OutcomeConnRefused)
	smtpservertest.RefuseAll(t, total-perIP, func(i int) (bool, string) {
		if i%10 == 0 {
			// The TLS port closes without a word.
			c, err := tlsGreeting(ts)
			if c != nil {
				_ = c.Close()
			}
			return err != nil, fmt.Sprint(err)
		}
		line, err := smtpservertest.Greeting(ts.addr)
		return err == nil && strings.HasPrefix(line, "421 4.7.0 "), fmt.Sprintf("%q %v", line, err)
	})
	if n := ts.outcome(submission.OutcomeConnRefused) - refusedBefore; n != total-perIP {
		t.Errorf("conn_refused = %d, want %d", n, total-perIP)
	}

	// Another address is served meanwhile.
	o := smtpservertest.DialFrom(t, ts.addr, "127.0.0.2")
	o.Expect("220 ")
	_ = o.Close()

	// The connections held are served all along.
	h := held[0]
	h.Send("EHLO client.test\r\n")
	h.Expect("250 ")

	// Once they go, the address is served again.
	for _, c := range held {
		c.Send("QUIT\r\n")
		c.Expect("221 ")
		_ = c.Close()
	}
	for _, c := range heldTLS {
		_ = c.Close()
	}
	smtpservertest.Settle(t, ts.addr)
	c := ts.dialTLS(t, goodKey)
	if _, err := send(c, "app@example.com", []string{"ann@example.net"}, message("after", "x\r\n")); err != nil {
		t.Fatalf("message after the flood: %v", err)
	}
	_ = c.Quit()

	smtpservertest.GoroutinesBack(t, baseline)
}

// tlsGreeting connects to the implicit-TLS port and reads the greeting.
func tlsGreeting(ts *testServer) (net.Conn, error) {
	d := &net.Dialer{Timeout: 5 * time.Second}
	c, err := d.Dial("tcp", ts.tlsAddr)
	if err != nil {
		return nil, err
	}
	tc := tlsClient(c, ts)
	_ = tc.SetDeadline(time.Now().Add(5 * time.Second))
	buf := make([]byte, 512)
	n, err := tc.Read(buf)
	if err != nil {
		_ = tc.Close()
		return nil, err
	}
	if !strings.HasPrefix(string(buf[:n]), "220 ") {
		_ = tc.Close()
		return nil, fmt.Errorf("greeting %q", buf[:n])
	}
	_ = tc.SetDeadline(time.Time{})
	return tc, nil
}

func TestMaxConnsOverallOverBothPorts(t *testing.T) {
	ts := startServer(t, func(s *submission.Server) { s.MaxConns = 3 })
	for range 2 {
		smtpservertest.Dial(t, ts.addr).Expect("220 ")
	}
	c, err := tlsGreeting(ts)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	r := smtpservertest.DialFrom(t, ts.addr, "127.0.0.2")
	r.Expect("421 4.7.0 ")
	if _, _, err := r.ClosedWithin(5 * time.Second); err != nil {
		t.Errorf("refused connection not closed: %v", err)
	}
	if _, err := tlsGreeting(ts); err == nil {
		t.Error("a fourth connection was greeted on the TLS port")
	}
}

func TestIdleClientIsCut(t *testing.T) {
	const timeout = 300 * time.Millisecond
	ts := startServer(t, func(s *submission.Server) { s.ReadTimeout = timeout })

	// Silent from the start.
	smtpservertest.IdleIsCut(t, ts.addr, timeout)

	// Silent after logging in, in the middle of a transaction.
	c := smtpservertest.Dial(t, ts.addr)
	c.StartTLS(ts.client)
	authPlain(c, goodKey)
	c.Expect("235 ")
	c.Send("MAIL FROM:<app@example.com>\r\n")
	c.Expect("250 ")
	if _, _, err := c.ClosedWithin(10 * time.Second); err != nil {
		t.Fatalf("client idle mid-transaction not disconnected: %v", err)
	}

	// Silent in the middle of its message: cut, and nothing submitted.
	c = smtpservertest.Dial(t, ts.addr)
	c.StartTLS(ts.client)
	authPlain(c, goodKey)
	c.Expect("235 ")
	c.Send("MAIL FROM:<app@example.com>\r\nRCPT TO:<ann@example.net>\r\nDATA\r\n")
	c.Expect("250 ")
	c.Expect("250 ")
	c.Expect("354 ")
	c.Send("Subject: never ends\r\n\r\n")
	_, rest, err := c.ClosedWithin(10 * time.Second)
	if err != nil {
		t.Fatalf("stalled DATA not cut: %v", err)
	}
	if !strings.HasPrefix(rest, "421 4.4.2") {
		t.Errorf("server said %q, want 421 4.4.2", rest)
	}
	if n := len(ts.h.messages()); n != 0 {
		t.Errorf("%d messages submitted", n)
	}
	poll.Until(t, 5*time.Second, "aborted not counted", func() bool {
		return ts.outcome(submission.OutcomeAborted) == 1
	})

	// A client that never finishes its TLS handshake on the TLS port.
	raw := smtpservertest.Dial(t, ts.tlsAddr)
	if _, _, err := raw.ClosedWithin(10 * time.Second); err != nil {
		t.Fatalf("stalled handshake not cut: %v", err)
	}
}

// TestSurvivesMalformedInput sends what no honest client does, in clear
// and logged in under TLS; the server answers, or closes, and goes on
// serving.
func TestSurvivesMalformedInput(t *testing.T) {
	ts := startServer(t, func(s *submission.Server) {
		s.ReadTimeout = 500 * time.Millisecond
		s.MaxBytes = 64 << 10
		s.MaxConnsPerIP = 100
	})
	tx := "MAIL FROM:<app@example.com>\r\nRCPT TO:<ann@example.net>\r\n"
	inputs := smtpservertest.MalformedInputs(tx)
	maps.Copy(inputs, map[string]string{
		"bare LF commands": "EHLO client.test\n" + tx + "RSET\nQUIT\n",
		"unknown commands": "FOO\r\nBAR baz\r\nVRFY root\r\nEXPN all\r\nAUTH\r\nAUTH CRAM-MD5\r\n",
		"bad base64":       "EHLO x\r\nAUTH PLAIN !!!\r\nAUTH LOGIN\r\n%%%\r\nQUIT\r\n",
		"SASL cancelled":   "EHLO x\r\nAUTH PLAIN\r\n*\r\nAUTH LOGIN\r\n*\r\nQUIT\r\n",
		"broken addresses": "EHLO x\r\nMAIL FROM:<<>>\r\nMAIL FROM:<a@b\r\nMAIL FROM:<> BODY=WHAT\r\nMAIL FROM:<>\r\nRCPT TO:<>\r\nRCPT TO:<\"\\\x00\"@[300.1.1.1]>\r\n",
		"BDAT message":     "EHLO x\r\n" + tx + "BDAT 21 LAST\r\nSubject: bdat\r\n\r\nhi\r\nQUIT\r\n",
		"STARTTLS twice":   "STARTTLS\r\n",
	})
	// The inputs run side by side, each mostly waiting for the read
	// timeout; the group ends when they all have.
	t.Run("inputs", func(t *testing.T) {
		for _, loggedIn := range []bool{false, true} {
			for name, input := range inputs {
				t.Run(fmt.Sprintf("%s/tls=%v", name, loggedIn), func(t *testing.T) {
					t.Parallel()
					c := smtpservertest.Dial(t, ts.addr)
					if loggedIn {
						c.StartTLS(ts.client)
						authPlain(c, goodKey)
						c.Expect("235 ")
					} else {
						c.Expect("220 ")
					}
					c.SendMalformed(name, input)
				})
			}
		}
	})

	// Still serving.
	c := ts.dialTLS(t, goodKey)
	if text, err := send(c, "app@example.com", []string{"ann@example.net"}, message("after-garbage", "x\r\n")); err != nil {
		t.Fatalf("message after malformed input: %q %v", text, err)
	}
	if strings.Contains(ts.log.String(), "panic") {
		t.Errorf("a panic was logged:\n%s", ts.log)
	}
}

func tlsClient(c net.Conn, ts *testServer) *tls.Conn { return tls.Client(c, ts.client) }

// TestMessageEndedNextToABareLFIsRefusedAtOnce: a logged-in client that
// ends its message with a line "." next to a bare LF is answered
// 500 5.5.2 at once and disconnected, rather than left waiting for the
// read timeout, and nothing is submitted.
func TestMessageEndedNextToABareLFIsRefusedAtOnce(t *testing.T) {
	ts := startServer(t)
	for name, message := range smtpservertest.BareLFEnds {
		t.Run(name, func(t *testing.T) {
			c := smtpservertest.Dial(t, ts.addr)
			c.StartTLS(ts.client)
			authPlain(c, goodKey)
			c.Expect("235 ")
			c.Send("MAIL FROM:<app@example.com>\r\nRCPT TO:<ann@example.net>\r\nDATA\r\n")
			c.Expect("250 ")
			c.Expect("250 ")
			c.Expect("354 ")
			c.ExpectBareLFRefused("From: app@example.com\r\n" + message)
		})
	}
	if got := ts.h.messages(); len(got) != 0 {
		t.Errorf("%d messages submitted", len(got))
	}
}
