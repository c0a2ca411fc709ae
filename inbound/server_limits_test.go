package inbound_test

import (
	"fmt"
	"net"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mailroom/mailroom/inbound"
	"github.com/mailroom/mailroom/smtpserver"
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
	// The server closes the warm-up connection just after its 221.
	eventually(t, 10*time.Second, "the warm-up connection is still counted", func() bool {
		line, err := greeting(ts.addr)
		return err == nil && strings.HasPrefix(line, "220 ")
	})
	baseline := runtime.NumGoroutine()

	held := make([]*rawConn, perIP)
	for i := range held {
		if i == 0 {
			// greeting's connection is closed by the client: wait until the
			// server has let it go too.
			eventually(t, 10*time.Second, "a slot is still taken", func() bool {
				held[0] = dialRaw(t, ts.addr)
				line, err := held[0].reply(10 * time.Second)
				return err == nil && strings.HasPrefix(line, "220 ")
			})
			continue
		}
		held[i] = dialRaw(t, ts.addr)
		held[i].expect("220 ")
	}

	refusedBefore := ts.outcome(inbound.OutcomeConnRefused)
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
			for range jobs {
				t0 := time.Now()
				line, err := greeting(ts.addr)
				took := time.Since(t0)
				mu.Lock()
				slowest = max(slowest, took)
				if err == nil && strings.HasPrefix(line, "421 4.7.0 ") {
					refused++
				} else if len(failures) < 5 {
					failures = append(failures, fmt.Sprintf("%q %v", line, err))
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
		t.Fatalf("%d of %d connections beyond the cap refused with 421; others: %v", refused, total-perIP, failures)
	}
	if slowest > 5*time.Second {
		t.Errorf("a refusal took %v", slowest)
	}
	if n := ts.outcome(inbound.OutcomeConnRefused) - refusedBefore; n != total-perIP {
		t.Errorf("conn_refused = %d, want %d", n, total-perIP)
	}

	// The connections held are served all along.
	h := held[0]
	h.send("EHLO sender.test\r\n")
	h.expect("250 ")
	h.send("NOOP\r\n")
	h.expect("250 ")

	// Once they go, the address is served again.
	for _, c := range held {
		c.send("QUIT\r\n")
		c.expect("221 ")
		_ = c.Close()
	}
	eventually(t, 10*time.Second, "a new connection is not greeted with 220 after the held ones closed", func() bool {
		line, err := greeting(ts.addr)
		return err == nil && strings.HasPrefix(line, "220 ")
	})
	c := dial(t, ts.addr)
	if err := send(c, rcpt, message("after", "x\r\n")); err != nil {
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

func TestServerMaxConnsOverall(t *testing.T) {
	ts := startServer(t, func(s *inbound.Server) { s.MaxConns = 3 })
	for range 3 {
		dialRaw(t, ts.addr).expect("220 ")
	}
	c := dialRaw(t, ts.addr)
	c.expect("421 4.7.0 ")
	if _, _, err := c.closedWithin(5 * time.Second); err != nil {
		t.Errorf("refused connection not closed: %v", err)
	}
}

func TestServerCutsIdleClientAfterReadTimeout(t *testing.T) {
	const timeout = 300 * time.Millisecond
	ts := startServer(t, func(s *inbound.Server) { s.ReadTimeout = timeout })

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

	// Silent in the middle of a transaction.
	c = dialRaw(t, ts.addr)
	c.expect("220 ")
	c.send("EHLO sender.test\r\nMAIL FROM:<>\r\nRCPT TO:<bounce-1@" + bounceDomain + ">\r\n")
	c.expect("250 ")
	c.expect("250 ")
	c.expect("250 ")
	if _, _, err := c.closedWithin(10 * time.Second); err != nil {
		t.Fatalf("client idle mid-transaction not disconnected: %v", err)
	}
}

func TestServerCutsDataThatNeverEnds(t *testing.T) {
	ts := startServer(t, func(s *inbound.Server) {
		s.ReadTimeout = 300 * time.Millisecond
		s.DataTimeout = time.Second
	})
	begin := func() *rawConn {
		c := dialRaw(t, ts.addr)
		c.expect("220 ")
		c.send("EHLO sender.test\r\nMAIL FROM:<>\r\nRCPT TO:<bounce-1@" + bounceDomain + ">\r\nDATA\r\n")
		c.expect("250 ")
		c.expect("250 ")
		c.expect("250 ")
		c.expect("354 ")
		c.send("Subject: never ends\r\n\r\n")
		return c
	}

	// A client that stops sending is cut after the read timeout.
	c := begin()
	took, rest, err := c.closedWithin(10 * time.Second)
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
	stop := make(chan struct{})
	defer close(stop)
	go func() {
		tick := time.NewTicker(50 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-stop:
				return
			case <-tick.C:
				_ = c.SetWriteDeadline(time.Now().Add(time.Second))
				if _, err := c.Write(chunk); err != nil {
					return
				}
			}
		}
	}()
	took, rest, err = c.closedWithin(10 * time.Second)
	// The server closes with the client's input unread, which the kernel
	// may answer with a reset that loses the 421 on the way.
	if err != nil && !isReset(err) {
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
	eventually(t, 5*time.Second, "aborted not counted twice", func() bool {
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
	inputs := map[string]string{
		"garbage":               "\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03garbage\r\n",
		"nul bytes":             "EHLO \x00\x00\x00\r\nMAIL FROM:<\x00@x>\r\n\x00\x00\x00\x00\r\n",
		"bare LF commands":      "EHLO sender.test\nMAIL FROM:<>\n" + rcptLine + "\nRSET\nQUIT\n",
		"commands out of order": "DATA\r\nRCPT TO:<a@b>\r\nMAIL FROM:<>\r\nMAIL FROM:<>\r\nBDAT 10 LAST\r\n0123456789",
		"unknown commands":      "FOO\r\nBAR baz\r\nSTARTTLS\r\nAUTH LOGIN\r\nVRFY root\r\nEXPN all\r\n",
		"broken addresses":      "EHLO x\r\nMAIL FROM:<<>>\r\nMAIL FROM:<a@b\r\nMAIL FROM:<> BODY=WHAT\r\nMAIL FROM:<>\r\nRCPT TO:<>\r\nRCPT TO:<\"\\\x00\"@[300.1.1.1]>\r\nRCPT TO:<@a,@b:c@" + bounceDomain + ">\r\n",
		"long line":             "EHLO " + strings.Repeat("x", 100_000) + "\r\n",
		"long line in DATA":     "EHLO x\r\nMAIL FROM:<>\r\n" + rcptLine + "\r\nDATA\r\nSubject: y\r\n\r\n" + strings.Repeat("y", 5000) + "\r\n.\r\n",
		"bare LF data":          "EHLO x\r\nMAIL FROM:<>\r\n" + rcptLine + "\r\nDATA\r\nSubject: lf\n\nbody\n.\nQUIT\n",
		"NUL in data":           "EHLO x\r\nMAIL FROM:<>\r\n" + rcptLine + "\r\nDATA\r\nX-Test: \x00\x00\r\n\r\n\x00\xff\xfe\r\n.\r\nQUIT\r\n",
		"BDAT bigger than said": "EHLO x\r\nMAIL FROM:<>\r\n" + rcptLine + "\r\nBDAT 4294967295 LAST\r\nabc",
		"BDAT over the limit":   "EHLO x\r\nMAIL FROM:<>\r\n" + rcptLine + "\r\nBDAT 70000 LAST\r\n" + strings.Repeat("z", 70000) + "RSET\r\nQUIT\r\n",
		"BDAT then RSET":        "EHLO x\r\nMAIL FROM:<>\r\n" + rcptLine + "\r\nBDAT 5\r\nabcdeRSET\r\nQUIT\r\n",
		"BDAT then EHLO":        "EHLO x\r\nMAIL FROM:<>\r\n" + rcptLine + "\r\nBDAT 5\r\nabcdeEHLO y\r\nMAIL FROM:<>\r\nQUIT\r\n",
		"nested MAIL":           "EHLO x\r\nMAIL FROM:<>\r\n" + rcptLine + "\r\nMAIL FROM:<a@b>\r\nDATA\r\nX-Test: nested\r\n\r\n.\r\nQUIT\r\n",
		"DATA then close":       "EHLO x\r\nMAIL FROM:<>\r\n" + rcptLine + "\r\nDATA\r\nSubject: half",
		"close in the middle":   "EHLO x\r\nMAIL FR",
	}
	for name, input := range inputs {
		t.Run(name, func(t *testing.T) {
			c := dialRaw(t, ts.addr)
			c.expect("220 ")
			_ = c.SetWriteDeadline(time.Now().Add(5 * time.Second))
			_, _ = c.Write([]byte(input)) // the server may close before reading it all
			if strings.HasSuffix(name, "close") || strings.HasPrefix(name, "close") {
				_ = c.Close()
				return
			}
			// Every such exchange ends: by QUIT, by the server giving up, or
			// by the read timeout; never by the server hanging.
			if _, _, err := c.closedWithin(10 * time.Second); err != nil && !isReset(err) {
				t.Errorf("connection not ended: %v", err)
			}
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

// isReset reports a connection the server closed with unread input, which
// the kernel answers with RST: an end all the same.
func isReset(err error) bool {
	return err != nil && (strings.Contains(err.Error(), "reset by peer") || strings.Contains(err.Error(), "broken pipe"))
}
