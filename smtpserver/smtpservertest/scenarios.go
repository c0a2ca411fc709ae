package smtpservertest

import (
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mailroom/mailroom/poll"
)

// Settle waits until a new connection to addr is greeted with 220, the
// connections before it having let go of their slots (a server closes a
// connection just after its 221), and returns how many goroutines run
// then: the baseline that GoroutinesBack waits for.
func Settle(t testing.TB, addr string) int {
	t.Helper()
	poll.Until(t, 10*time.Second, "the connections before are still counted", func() bool {
		line, err := Greeting(addr)
		return err == nil && strings.HasPrefix(line, "220 ")
	})
	return runtime.NumGoroutine()
}

// GoroutinesBack waits until no more goroutines run than baseline (and
// two for the runtime's own comings and goings).
func GoroutinesBack(t testing.TB, baseline int) {
	t.Helper()
	poll.Until(t, 10*time.Second, "goroutines do not return to the baseline", func() bool {
		return runtime.NumGoroutine() <= baseline+2
	})
}

// RefuseAll makes n connections beyond a server's caps, a hundred at a
// time, through try, which says whether connection i was refused as it
// should be (and, when not, what happened). It fails unless every one was,
// each within 5 seconds.
func RefuseAll(t testing.TB, n int, try func(i int) (refused bool, what string)) {
	t.Helper()
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
				ok, what := try(i)
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
	for i := range n {
		jobs <- i
	}
	close(jobs)
	wg.Wait()
	t.Logf("%d connections refused in %v, slowest %v", n, time.Since(start), slowest)
	if refused != n {
		t.Fatalf("%d of %d connections beyond the cap refused; others: %v", refused, n, failures)
	}
	if slowest > 5*time.Second {
		t.Errorf("a refusal took %v", slowest)
	}
}

// IdleIsCut checks that a client silent after the greeting is answered
// 421 and disconnected, not before half of timeout.
func IdleIsCut(t testing.TB, addr string, timeout time.Duration) {
	t.Helper()
	c := Dial(t, addr)
	c.Expect("220 ")
	took, rest, err := c.ClosedWithin(10 * time.Second)
	if err != nil {
		t.Fatalf("idle client not disconnected: %v", err)
	}
	if took < timeout/2 {
		t.Errorf("cut after %v, before the timeout", took)
	}
	if !strings.HasPrefix(rest, "421 ") {
		t.Errorf("server said %q before closing, want a 421", rest)
	}
}

// MalformedInputs are what no honest client sends, by name, that every
// listener must survive: tx is a transaction's MAIL and RCPT lines, each
// ending in CRLF, that the server takes. A name that begins or ends with
// "close" is an input after which the client closes.
func MalformedInputs(tx string) map[string]string {
	return map[string]string{
		"garbage":               "\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03garbage\r\n",
		"nul bytes":             "EHLO \x00\x00\x00\r\nMAIL FROM:<\x00@x>\r\n\x00\x00\x00\x00\r\n",
		"commands out of order": "DATA\r\nRCPT TO:<a@b>\r\nMAIL FROM:<>\r\nMAIL FROM:<>\r\nBDAT 10 LAST\r\n0123456789",
		"long line":             "EHLO " + strings.Repeat("x", 100_000) + "\r\n",
		"long line in DATA":     "EHLO x\r\n" + tx + "DATA\r\nSubject: y\r\n\r\n" + strings.Repeat("y", 5000) + "\r\n.\r\n",
		"bare LF data":          "EHLO x\r\n" + tx + "DATA\r\nSubject: lf\n\nbody\n.\nQUIT\n",
		"NUL in data":           "EHLO x\r\n" + tx + "DATA\r\nX-Test: \x00\x00\r\n\r\n\x00\xff\xfe\r\n.\r\nQUIT\r\n",
		"BDAT bigger than said": "EHLO x\r\n" + tx + "BDAT 4294967295 LAST\r\nabc",
		"BDAT over the limit":   "EHLO x\r\n" + tx + "BDAT 70000 LAST\r\n" + strings.Repeat("z", 70000) + "RSET\r\nQUIT\r\n",
		"BDAT then RSET":        "EHLO x\r\n" + tx + "BDAT 5\r\nabcdeRSET\r\nQUIT\r\n",
		"DATA then close":       "EHLO x\r\n" + tx + "DATA\r\nSubject: half",
		"close in the middle":   "EHLO x\r\nMAIL FR",
	}
}

// SendMalformed writes input, one of MalformedInputs, on c (greeted, or
// logged in) and checks that the exchange ends: by QUIT, by the server
// giving up, or by the read timeout; never by the server hanging.
func (c *Conn) SendMalformed(name, input string) {
	c.t.Helper()
	_ = c.SetWriteDeadline(time.Now().Add(5 * time.Second))
	_, _ = c.Write([]byte(input)) // the server may close before reading it all
	if strings.HasSuffix(name, "close") || strings.HasPrefix(name, "close") {
		_ = c.Close()
		return
	}
	if _, _, err := c.ClosedWithin(10 * time.Second); err != nil && !IsReset(err) {
		c.t.Errorf("connection not ended: %v", err)
	}
}

// Trickle writes chunk on c at every tick of every, as a client trickling
// a message for ever does, until the server closes or the returned stop is
// called.
func (c *Conn) Trickle(chunk []byte, every time.Duration) (stop func()) {
	done := make(chan struct{})
	go func() {
		tick := time.NewTicker(every)
		defer tick.Stop()
		for {
			select {
			case <-done:
				return
			case <-tick.C:
				_ = c.SetWriteDeadline(time.Now().Add(time.Second))
				if _, err := c.Write(chunk); err != nil {
					return
				}
			}
		}
	}()
	return func() { close(done) }
}

// Hold opens n connections to addr that are each greeted with 220 and
// stay open. A connection refused with a 421 is tried again: a greeting
// seen by Settle proves only that fewer connections than the cap were
// still being let go by the server (which frees a slot when it has closed
// the connection, a moment after the client saw it close), not that none
// were. A cap below n fails at the deadline.
func Hold(t testing.TB, addr string, n int) []*Conn {
	t.Helper()
	held := make([]*Conn, 0, n)
	for len(held) < n {
		poll.Until(t, 10*time.Second, "a slot is still taken", func() bool {
			c := Dial(t, addr)
			line, err := c.Reply(10 * time.Second)
			if err == nil && strings.HasPrefix(line, "220 ") {
				held = append(held, c)
				return true
			}
			_ = c.Close()
			return false
		})
	}
	return held
}
