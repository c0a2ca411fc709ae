package inbound_test

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"io"
	"log/slog"
	"net"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	gosmtp "github.com/emersion/go-smtp"

	"github.com/mailroom/mailroom"
	"github.com/mailroom/mailroom/inbound"
)

// bounceDomain is the bounce subdomain the fake Handler takes mail for.
const bounceDomain = "bounces.example.com"

// fakeHandler takes mail for bounceDomain and records what it is given.
type fakeHandler struct {
	mu        sync.Mutex
	acceptErr error
	applyErr  error
	// block, when set, holds Apply until it is closed; entered receives
	// a value each time Apply starts.
	block   chan struct{}
	entered chan struct{}
	asked   []string
	applied []appliedReport
}

type appliedReport struct {
	rcpt   string
	report *mailroom.Report
}

func (h *fakeHandler) Accepts(_ context.Context, rcpt string) (bool, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.asked = append(h.asked, rcpt)
	if h.acceptErr != nil {
		return false, h.acceptErr
	}
	return strings.HasSuffix(strings.ToLower(rcpt), "@"+bounceDomain), nil
}

func (h *fakeHandler) Apply(ctx context.Context, rcpt string, r *mailroom.Report) error {
	h.mu.Lock()
	block, entered, err := h.block, h.entered, h.applyErr
	h.mu.Unlock()
	if entered != nil {
		entered <- struct{}{}
	}
	if block != nil {
		select {
		case <-block:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	if err != nil {
		return err
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	h.applied = append(h.applied, appliedReport{rcpt: rcpt, report: r})
	return nil
}

func (h *fakeHandler) set(f func(h *fakeHandler)) {
	h.mu.Lock()
	defer h.mu.Unlock()
	f(h)
}

func (h *fakeHandler) appliedReports() []appliedReport {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]appliedReport(nil), h.applied...)
}

// testServer is an inbound.Server on 127.0.0.1 with a fake Handler and
// parser, recording the messages parsed, the outcomes and the log.
type testServer struct {
	srv      *inbound.Server
	addr     string
	h        *fakeHandler
	log      *syncBuffer
	serveErr chan error

	mu       sync.Mutex
	parsed   [][]byte
	outcomes map[string]int
}

// fakeParse reads the whole message and says what it is from an X-Test
// header: "unparseable" (an error), "panic", or anything else (a DSN whose
// Text is the header's value).
func (ts *testServer) fakeParse(r io.Reader) (*mailroom.Report, error) {
	data, err := io.ReadAll(r)
	if err != nil {
		return nil, err
	}
	ts.mu.Lock()
	ts.parsed = append(ts.parsed, data)
	ts.mu.Unlock()
	var test string
	for _, line := range strings.Split(string(data), "\r\n") {
		if line == "" {
			break
		}
		if v, ok := strings.CutPrefix(line, "X-Test: "); ok {
			test = v
		}
	}
	switch test {
	case "unparseable":
		return nil, errors.New("not a message")
	case "panic":
		panic("parser bug")
	}
	return &mailroom.Report{Kind: mailroom.ReportDSN, Text: test}, nil
}

func (ts *testServer) observe(outcome string) {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	ts.outcomes[outcome]++
}

func (ts *testServer) outcome(name string) int {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	return ts.outcomes[name]
}

func (ts *testServer) parsedMessages() [][]byte {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	return append([][]byte(nil), ts.parsed...)
}

// startServer serves on a free port of 127.0.0.1 until the test ends.
func startServer(t *testing.T, configure ...func(*inbound.Server)) *testServer {
	t.Helper()
	ts := &testServer{h: &fakeHandler{}, log: &syncBuffer{}, serveErr: make(chan error, 1), outcomes: map[string]int{}}
	ts.srv = &inbound.Server{
		Handler:  ts.h,
		Hostname: "mx.test",
		Log:      slog.New(slog.NewTextHandler(ts.log, &slog.HandlerOptions{Level: slog.LevelDebug})),
		Parse:    ts.fakeParse,
		Observe:  ts.observe,
	}
	for _, f := range configure {
		f(ts.srv)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ts.addr = ln.Addr().String()
	go func() { ts.serveErr <- ts.srv.Serve(ln) }()
	t.Cleanup(func() {
		_ = ts.srv.Close()
		select {
		case err := <-ts.serveErr:
			if !errors.Is(err, inbound.ErrServerClosed) {
				t.Errorf("Serve returned %v, want ErrServerClosed", err)
			}
		case <-time.After(10 * time.Second):
			t.Error("Serve did not return after Close")
		}
	})
	return ts
}

// dial connects a go-smtp client and says EHLO.
func dial(t *testing.T, addr string) *gosmtp.Client {
	t.Helper()
	c, err := gosmtp.Dial(addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	if err := c.Hello("sender.test"); err != nil {
		t.Fatal(err)
	}
	return c
}

// send runs one transaction from the null sender, as a bounce comes, and
// returns the first error.
func send(c *gosmtp.Client, to []string, msg []byte) error {
	if err := c.Mail("", nil); err != nil {
		return err
	}
	for _, rcpt := range to {
		if err := c.Rcpt(rcpt, nil); err != nil {
			return err
		}
	}
	w, err := c.Data()
	if err != nil {
		return err
	}
	if _, err := w.Write(msg); err != nil {
		return err
	}
	return w.Close()
}

// smtpCode is the reply code of err, 0 when it is not an SMTP reply.
func smtpCode(err error) int {
	var e *gosmtp.SMTPError
	if errors.As(err, &e) {
		return e.Code
	}
	return 0
}

func message(xTest, body string) []byte {
	return []byte("From: MAILER-DAEMON@remote.test\r\n" +
		"To: bounce-1@" + bounceDomain + "\r\n" +
		"Subject: Undelivered Mail Returned to Sender\r\n" +
		"X-Test: " + xTest + "\r\n" +
		"\r\n" + body)
}

// messageOfSize is a message of exactly n bytes, as the server counts
// them: CRLF line ends, no line beginning with a dot.
func messageOfSize(n int) []byte {
	var b bytes.Buffer
	b.WriteString("Subject: size\r\nX-Test: sized\r\n\r\n")
	for rest := n - b.Len(); rest > 0; rest = n - b.Len() {
		k := min(76, rest-2)
		if rest-(k+2) == 1 {
			k--
		}
		b.WriteString(strings.Repeat("a", k) + "\r\n")
	}
	if b.Len() != n {
		panic("messageOfSize: wrong size")
	}
	return b.Bytes()
}

// rawConn is a plain connection for what a well-behaved client would not
// send, with a reader of the server's replies.
type rawConn struct {
	t *testing.T
	net.Conn
	r *bufio.Reader
}

func dialRaw(t *testing.T, addr string) *rawConn {
	t.Helper()
	c, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return &rawConn{t: t, Conn: c, r: bufio.NewReader(c)}
}

func (c *rawConn) send(s string) {
	c.t.Helper()
	_ = c.SetWriteDeadline(time.Now().Add(5 * time.Second))
	if _, err := io.WriteString(c, s); err != nil {
		c.t.Fatalf("writing %q: %v", s, err)
	}
}

// reply reads one whole reply (its last line), waiting at most d.
func (c *rawConn) reply(d time.Duration) (string, error) {
	_ = c.SetReadDeadline(time.Now().Add(d))
	for {
		line, err := c.r.ReadString('\n')
		if err != nil {
			return line, err
		}
		if len(line) < 4 || line[3] != '-' {
			return strings.TrimRight(line, "\r\n"), nil
		}
	}
}

// expect reads a reply and fails unless it begins with prefix.
func (c *rawConn) expect(prefix string) string {
	c.t.Helper()
	line, err := c.reply(10 * time.Second)
	if err != nil || !strings.HasPrefix(line, prefix) {
		c.t.Fatalf("reply %q (%v), want %q…", line, err, prefix)
	}
	return line
}

// closedWithin waits for the server to close the connection, discarding
// what it sends, and returns how long that took.
func (c *rawConn) closedWithin(d time.Duration) (time.Duration, string, error) {
	start := time.Now()
	_ = c.SetReadDeadline(start.Add(d))
	rest, err := io.ReadAll(c.r)
	if err != nil {
		return time.Since(start), string(rest), err
	}
	return time.Since(start), string(rest), nil
}

// eventually polls cond until it holds or the deadline passes.
func eventually(t *testing.T, d time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("after %v: %s", d, what)
		}
		runtime.Gosched()
		time.Sleep(5 * time.Millisecond)
	}
}

// syncBuffer is a log destination safe for the server's goroutines.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}
