package submission_test

import (
	"context"
	"fmt"
	"net"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/emersion/go-sasl"
	gosmtp "github.com/emersion/go-smtp"

	"github.com/mailroom/mailroom/smtpserver/smtpservertest"
	"github.com/mailroom/mailroom/submission"
)

// recordedSleeps is a Server.Sleep that returns at once and remembers
// what it was asked to wait.
type recordedSleeps struct {
	mu sync.Mutex
	ds []time.Duration
}

func (r *recordedSleeps) Sleep(_ context.Context, d time.Duration) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.ds = append(r.ds, d)
	return nil
}

func (r *recordedSleeps) all() []time.Duration {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.ds)
}

// dialFrom is go-smtp's client connected from the local address from,
// after STARTTLS and EHLO, not logged in.
func (ts *testServer) dialFrom(t *testing.T, from string) *gosmtp.Client {
	t.Helper()
	d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(from)}}
	nc, err := d.Dial("tcp", ts.addr)
	if err != nil {
		t.Fatal(err)
	}
	c, err := gosmtp.NewClientStartTLS(nc, ts.client)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	if err := c.Hello("client.test"); err != nil {
		t.Fatal(err)
	}
	return c
}

// TestRightKeyLogsInAfterFailures: five failures from an address are
// answered at once; past them each AUTH from it waits, longer each time,
// but is still checked: a right key logs in and sends, and the failures
// are counted. Another address is not slowed.
func TestRightKeyLogsInAfterFailures(t *testing.T) {
	var sleeps recordedSleeps
	ts := startServer(t, func(s *submission.Server) { s.Sleep = sleeps.Sleep })

	// A misconfigured worker connects again after each refusal (go-smtp's
	// client aborts a failed AUTH with "*", which the server counts as a
	// bad command).
	for i := range submission.DefaultAuthFailureBurst + 2 {
		c := ts.dialFrom(t, "127.0.0.1")
		err := c.Auth(sasl.NewPlainClient("", "worker", "mailroom_guess_"+strings.Repeat("x", i)))
		wantReply(t, fmt.Sprintf("wrong key %d", i+1), err, 535, gosmtp.EnhancedCode{5, 7, 8})
	}
	ms := time.Millisecond
	if got, want := sleeps.all(), []time.Duration{500 * ms, 1000 * ms}; !slices.Equal(got, want) {
		t.Errorf("delays after 7 failures = %v, want %v (none for the first 5)", got, want)
	}

	// Another process behind the same address, with the right key: it
	// waits too, and logs in.
	w := ts.dialFrom(t, "127.0.0.1")
	if err := w.Auth(sasl.NewPlainClient("", "worker", goodKey)); err != nil {
		t.Fatalf("right key after 7 failures from the address: %v", err)
	}
	if reply, err := send(w, "app@example.com", []string{"ann@example.net"}, message("hi", "after the failures")); err != nil {
		t.Fatalf("send after a delayed login: %v", err)
	} else if !strings.Contains(reply, "queued as") {
		t.Errorf("send after a delayed login: %q", reply)
	}
	if n := len(ts.h.messages()); n != 1 {
		t.Errorf("%d messages submitted, want 1", n)
	}
	if got := sleeps.all(); len(got) != 3 || got[2] != 2000*ms {
		t.Errorf("delays = %v, want the right key's login delayed 2s", got)
	}

	// Another address is answered without delay.
	o := ts.dialFrom(t, "127.0.0.2")
	err := o.Auth(sasl.NewPlainClient("", "worker", "mailroom_guess_other"))
	wantReply(t, "other address", err, 535, gosmtp.EnhancedCode{5, 7, 8})
	if n := len(sleeps.all()); n != 3 {
		t.Errorf("another address's login was delayed (%d delays)", n)
	}

	for outcome, want := range map[string]int{
		submission.OutcomeAuthFailed:  submission.DefaultAuthFailureBurst + 3,
		submission.OutcomeAuthLimited: 3,
		submission.OutcomeAuthOK:      1,
	} {
		if n := ts.outcome(outcome); n != want {
			t.Errorf("%s = %d, want %d", outcome, n, want)
		}
	}
}

// TestLoginDelayIsWaited: with the real sleeper, the reply to a delayed
// AUTH comes no earlier than its delay (a lower bound only: a loaded
// machine may take longer).
func TestLoginDelayIsWaited(t *testing.T) {
	const first = 300 * time.Millisecond
	ts := startServer(t, func(s *submission.Server) { s.AuthFailureBurst, s.AuthFirstDelay = 1, first })
	c := ts.dialFrom(t, "127.0.0.1")
	err := c.Auth(sasl.NewPlainClient("", "worker", "mailroom_guess"))
	wantReply(t, "first wrong key", err, 535, gosmtp.EnhancedCode{5, 7, 8})
	start := time.Now()
	if err := c.Auth(sasl.NewPlainClient("", "worker", goodKey)); err != nil {
		t.Fatalf("right key: %v", err)
	}
	if took := time.Since(start); took < first {
		t.Errorf("delayed login answered after %v, before its delay of %v", took, first)
	}
}

// TestLoginDelayEndsAtShutdown: a login waiting out its delay does not
// hold the server's shutdown: the wait ends, the client is told 421 and
// the connection is closed.
func TestLoginDelayEndsAtShutdown(t *testing.T) {
	waiting, returned := make(chan struct{}), make(chan error, 1)
	ts := startServer(t, func(s *submission.Server) {
		s.AuthFailureBurst = 1
		s.Sleep = func(ctx context.Context, d time.Duration) error {
			close(waiting)
			<-ctx.Done()
			returned <- ctx.Err()
			return ctx.Err()
		}
	})
	c := smtpservertest.DialFrom(t, ts.addr, "127.0.0.1")
	c.StartTLS(ts.client)
	authPlain(c, "mailroom_guess")
	c.Expect("535 5.7.8 ")
	authPlain(c, goodKey)
	<-waiting
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := ts.srv.Shutdown(ctx); err != nil {
		t.Errorf("Shutdown: %v", err)
	}
	if err := <-returned; err == nil {
		t.Error("the delay ended without its context")
	}
	if line, err := c.Reply(time.Minute); err == nil && !strings.HasPrefix(line, "421 ") {
		t.Errorf("reply to a login cut by the shutdown: %q", line)
	}
	if _, rest, err := c.ClosedWithin(time.Minute); err != nil && !smtpservertest.IsReset(err) {
		t.Errorf("connection not closed after the shutdown: %v (%q)", err, rest)
	}
	if n := ts.outcome(submission.OutcomeAuthOK); n != 0 {
		t.Errorf("auth_ok = %d: a login cut by the shutdown was let in", n)
	}
}

// TestSuccessfulLoginsAreNotLimited: logging in, however often and from
// however many connections at once, costs nothing of the budget.
func TestSuccessfulLoginsAreNotLimited(t *testing.T) {
	ts := startServer(t)
	var conns []*smtpservertest.Conn
	for range 10 {
		c := smtpservertest.DialFrom(t, ts.addr, "127.0.0.3")
		c.StartTLS(ts.client)
		conns = append(conns, c)
	}
	// All AUTHs in flight together, then all replies.
	for range 3 {
		for _, c := range conns {
			authPlain(c, goodKey)
		}
		for _, c := range conns {
			c.Expect("235 ")
			c.Send("RSET\r\n")
			c.Expect("250 ")
		}
		for i, c := range conns {
			// Log in again on a fresh TLS session: STARTTLS ends a
			// login, so reconnect.
			_ = c.Close()
			conns[i] = smtpservertest.DialFrom(t, ts.addr, "127.0.0.3")
			conns[i].StartTLS(ts.client)
		}
	}
	if n := ts.outcome(submission.OutcomeAuthLimited); n != 0 {
		t.Errorf("auth_limited = %d", n)
	}
}
