package submission_test

import (
	"crypto/tls"
	"fmt"
	"net"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mailroom/mailroom/smtpserver"
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
	eventually(t, 10*time.Second, "the warm-up connection is still counted", func() bool {
		line, err := greeting(ts.addr)
		return err == nil && strings.HasPrefix(line, "220 ")
	})
	baseline := runtime.NumGoroutine()

	// Half the slots on each port.
	var held []*rawConn
	eventually(t, 10*time.Second, "a slot is still taken", func() bool {
		c := dialRaw(t, ts.addr)
		line, err := c.reply(10 * time.Second)
		if err == nil && strings.HasPrefix(line, "220 ") {
			held = append(held, c)
			return true
		}
		return false
	})
	for len(held) < perIP/2 {
		c := dialRaw(t, ts.addr)
		c.expect("220 ")
		held = append(held, c)
	}
	var heldTLS []net.Conn
	for len(heldTLS) < perIP-perIP/2 {
		c, err := tlsGreeting(ts)
		if err != nil {
			t.Fatalf("implicit TLS connection %d: %v", len(heldTLS), err)
		}
		heldTLS = append(heldTLS, c)
	}

	refusedBefore := ts.outcome(submission.OutcomeConnRefused)
	start := time.Now()
	var (
		wg       sync.WaitGroup
		mu       sync.Mutex
		refused  int
		failures []string
		slowest  time.Duration
	)
	jobs := make(chan int)
	for range 100 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range jobs {
				t0 := time.Now()
				var ok bool
				var what string
				if i%10 == 0 {
					// The TLS port closes without a word.
					c, err := tlsGreeting(ts)
					if c != nil {
						_ = c.Close()
					}
					ok, what = err != nil, fmt.Sprint(err)
				} else {
					line, err := greeting(ts.addr)
					ok, what = err == nil && strings.HasPrefix(line, "421 4.7.0 "), fmt.Sprintf("%q %v", line, err)
				}
				took := time.Since(t0)
				mu.Lock()
				slowest = max(slowest, took)
				if ok {
					refused++
				} else if len(failures) < 5 {
					failures = append(failures, what)
				}
				mu.Unlock()
			}
		}()
	}
	for i := range total - perIP {
		jobs <- i
	}
	close(jobs)
	wg.Wait()
	t.Logf("%d connections refused in %v, slowest %v", total-perIP, time.Since(start), slowest)
	if refused != total-perIP {
		t.Fatalf("%d of %d connections beyond the cap refused; others: %v", refused, total-perIP, failures)
	}
	if slowest > 5*time.Second {
		t.Errorf("a refusal took %v", slowest)
	}
	if n := ts.outcome(submission.OutcomeConnRefused) - refusedBefore; n != total-perIP {
		t.Errorf("conn_refused = %d, want %d", n, total-perIP)
	}

	// Another address is served meanwhile.
	o := dialRawFrom(t, ts.addr, "127.0.0.2")
	o.expect("220 ")
	_ = o.Close()

	// The connections held are served all along.
	h := held[0]
	h.send("EHLO client.test\r\n")
	h.expect("250 ")

	// Once they go, the address is served again.
	for _, c := range held {
		c.send("QUIT\r\n")
		c.expect("221 ")
		_ = c.Close()
	}
	for _, c := range heldTLS {
		_ = c.Close()
	}
	eventually(t, 10*time.Second, "a new connection is not greeted after the held ones closed", func() bool {
		line, err := greeting(ts.addr)
		return err == nil && strings.HasPrefix(line, "220 ")
	})
	c := ts.dialTLS(t, goodKey)
	if _, err := send(c, "app@example.com", []string{"ann@example.net"}, message("after", "x\r\n")); err != nil {
		t.Fatalf("message after the flood: %v", err)
	}
	_ = c.Quit()

	eventually(t, 10*time.Second, "goroutines do not return to the baseline", func() bool {
		return runtime.NumGoroutine() <= baseline+2
	})
}

// greeting connects, reads the first line and closes.
func greeting(addr string) (string, error) {
	c, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		return "", err
	}
	defer c.Close()
	_ = c.SetReadDeadline(time.Now().Add(5 * time.Second))
	buf := make([]byte, 512)
	n, err := c.Read(buf)
	line, _, _ := strings.Cut(string(buf[:n]), "\r\n")
	if n > 0 {
		err = nil
	}
	return line, err
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
		dialRaw(t, ts.addr).expect("220 ")
	}
	c, err := tlsGreeting(ts)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	r := dialRawFrom(t, ts.addr, "127.0.0.2")
	r.expect("421 4.7.0 ")
	if _, _, err := r.closedWithin(5 * time.Second); err != nil {
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
	c := dialRaw(t, ts.addr)
	c.expect("220 ")
	took, rest, err := c.closedWithin(10 * time.Second)
	if err != nil {
		t.Fatalf("idle client not disconnected: %v", err)
	}
	if took < timeout/2 {
		t.Errorf("cut after %v, before the timeout", took)
	}
	if !strings.HasPrefix(rest, "421 ") {
		t.Errorf("server said %q before closing, want a 421", rest)
	}

	// Silent after logging in, in the middle of a transaction.
	c = dialRaw(t, ts.addr)
	c.startTLS(ts.client)
	c.authPlain(goodKey)
	c.expect("235 ")
	c.send("MAIL FROM:<app@example.com>\r\n")
	c.expect("250 ")
	if _, _, err := c.closedWithin(10 * time.Second); err != nil {
		t.Fatalf("client idle mid-transaction not disconnected: %v", err)
	}

	// Silent in the middle of its message: cut, and nothing submitted.
	c = dialRaw(t, ts.addr)
	c.startTLS(ts.client)
	c.authPlain(goodKey)
	c.expect("235 ")
	c.send("MAIL FROM:<app@example.com>\r\nRCPT TO:<ann@example.net>\r\nDATA\r\n")
	c.expect("250 ")
	c.expect("250 ")
	c.expect("354 ")
	c.send("Subject: never ends\r\n\r\n")
	_, rest, err = c.closedWithin(10 * time.Second)
	if err != nil {
		t.Fatalf("stalled DATA not cut: %v", err)
	}
	if !strings.HasPrefix(rest, "421 4.4.2") {
		t.Errorf("server said %q, want 421 4.4.2", rest)
	}
	if n := len(ts.h.messages()); n != 0 {
		t.Errorf("%d messages submitted", n)
	}
	eventually(t, 5*time.Second, "aborted not counted", func() bool {
		return ts.outcome(submission.OutcomeAborted) == 1
	})

	// A client that never finishes its TLS handshake on the TLS port.
	raw := dialRaw(t, ts.tlsAddr)
	if _, _, err := raw.closedWithin(10 * time.Second); err != nil {
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
	inputs := map[string]string{
		"garbage":               "\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03garbage\r\n",
		"nul bytes":             "EHLO \x00\x00\x00\r\nMAIL FROM:<\x00@x>\r\n\x00\x00\x00\x00\r\n",
		"bare LF commands":      "EHLO client.test\n" + tx + "RSET\nQUIT\n",
		"commands out of order": "DATA\r\nRCPT TO:<a@b>\r\nMAIL FROM:<>\r\nMAIL FROM:<>\r\nBDAT 10 LAST\r\n0123456789",
		"unknown commands":      "FOO\r\nBAR baz\r\nVRFY root\r\nEXPN all\r\nAUTH\r\nAUTH CRAM-MD5\r\n",
		"bad base64":            "EHLO x\r\nAUTH PLAIN !!!\r\nAUTH LOGIN\r\n%%%\r\nQUIT\r\n",
		"SASL cancelled":        "EHLO x\r\nAUTH PLAIN\r\n*\r\nAUTH LOGIN\r\n*\r\nQUIT\r\n",
		"broken addresses":      "EHLO x\r\nMAIL FROM:<<>>\r\nMAIL FROM:<a@b\r\nMAIL FROM:<> BODY=WHAT\r\nMAIL FROM:<>\r\nRCPT TO:<>\r\nRCPT TO:<\"\\\x00\"@[300.1.1.1]>\r\n",
		"long line":             "EHLO " + strings.Repeat("x", 100_000) + "\r\n",
		"long line in DATA":     "EHLO x\r\n" + tx + "DATA\r\nSubject: y\r\n\r\n" + strings.Repeat("y", 5000) + "\r\n.\r\n",
		"bare LF data":          "EHLO x\r\n" + tx + "DATA\r\nSubject: lf\n\nbody\n.\nQUIT\n",
		"NUL in data":           "EHLO x\r\n" + tx + "DATA\r\nX-Test: \x00\x00\r\n\r\n\x00\xff\xfe\r\n.\r\nQUIT\r\n",
		"BDAT bigger than said": "EHLO x\r\n" + tx + "BDAT 4294967295 LAST\r\nabc",
		"BDAT over the limit":   "EHLO x\r\n" + tx + "BDAT 70000 LAST\r\n" + strings.Repeat("z", 70000) + "RSET\r\nQUIT\r\n",
		"BDAT then RSET":        "EHLO x\r\n" + tx + "BDAT 5\r\nabcdeRSET\r\nQUIT\r\n",
		"BDAT message":          "EHLO x\r\n" + tx + "BDAT 21 LAST\r\nSubject: bdat\r\n\r\nhi\r\nQUIT\r\n",
		"STARTTLS twice":        "STARTTLS\r\n",
		"DATA then close":       "EHLO x\r\n" + tx + "DATA\r\nSubject: half",
		"close in the middle":   "EHLO x\r\nMAIL FR",
	}
	// The inputs run side by side, each mostly waiting for the read
	// timeout; the group ends when they all have.
	t.Run("inputs", func(t *testing.T) {
		for _, loggedIn := range []bool{false, true} {
			for name, input := range inputs {
				t.Run(fmt.Sprintf("%s/tls=%v", name, loggedIn), func(t *testing.T) {
					t.Parallel()
					c := dialRaw(t, ts.addr)
					if loggedIn {
						c.startTLS(ts.client)
						c.authPlain(goodKey)
						c.expect("235 ")
					} else {
						c.expect("220 ")
					}
					_ = c.SetWriteDeadline(time.Now().Add(5 * time.Second))
					_, _ = c.Write([]byte(input)) // the server may close before reading it all
					if strings.HasSuffix(name, "close") || strings.HasPrefix(name, "close") {
						_ = c.Close()
						return
					}
					// Every such exchange ends: by QUIT, by the server giving
					// up, or by the read timeout; never by the server hanging.
					if _, _, err := c.closedWithin(10 * time.Second); err != nil && !isReset(err) {
						t.Errorf("connection not ended: %v", err)
					}
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
