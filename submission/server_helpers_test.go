package submission_test

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/emersion/go-sasl"
	gosmtp "github.com/emersion/go-smtp"

	"github.com/mailroom/mailroom"
	"github.com/mailroom/mailroom/submission"
	"github.com/mailroom/mailroom/tlscert"
)

// The keys the fake Handler knows, as a client writes them.
const (
	goodKey    = "mailroom_key1_s3cret-send-key-never-logged"
	otherKey   = "mailroom_key2_another-send-key"
	revokedKey = "mailroom_key3_revoked"
	scopeKey   = "mailroom_key4_domains-only"
	// certName is the name the test certificate is for.
	certName = "smtp.test.example"
)

// fakeHandler knows goodKey and otherKey (scope send), revokedKey and
// scopeKey, and records what it is given.
type fakeHandler struct {
	mu        sync.Mutex
	authErr   error // returned by Authenticate for any key, when set
	revoked   map[string]bool
	deny      bool // Allow says false
	submitErr error
	// submitPanic makes Submit panic; block, when set, holds Submit until
	// it is closed (or its context ends), and entered receives a value
	// each time Submit starts.
	submitPanic bool
	block       chan struct{}
	entered     chan struct{}
	auths       int
	submitted   []submitted
}

type submitted struct {
	keyID    string
	mailFrom string
	rcpts    []string
	data     []byte
}

func newFakeHandler() *fakeHandler {
	return &fakeHandler{revoked: map[string]bool{revokedKey: true}}
}

func (h *fakeHandler) Authenticate(_ context.Context, password string) (*mailroom.APIKey, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.auths++
	if h.authErr != nil {
		return nil, h.authErr
	}
	id, ok := map[string]string{goodKey: "key1", otherKey: "key2", revokedKey: "key3", scopeKey: "key4"}[password]
	switch {
	case !ok:
		return nil, mailroom.Errorf(mailroom.ECodeInvalidAPIKey, "The API key is invalid.")
	case h.revoked[password]:
		return nil, mailroom.Errorf(mailroom.ECodeAPIKeyRevoked, "The API key %s has been revoked.", id)
	case password == scopeKey:
		return nil, mailroom.Errorf(mailroom.ECodeInsufficientScope, "The API key lacks scope send.")
	}
	return &mailroom.APIKey{KeyID: id, AccountID: "acct_1", Scopes: mailroom.Scopes{mailroom.ScopeSend}}, nil
}

func (h *fakeHandler) Allow(*mailroom.APIKey) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	return !h.deny
}

func (h *fakeHandler) Submit(ctx context.Context, key *mailroom.APIKey, mailFrom string, rcpts []string, raw io.Reader) (string, error) {
	data, err := io.ReadAll(raw)
	if err != nil {
		return "", err
	}
	h.mu.Lock()
	block, entered, submitErr, panics := h.block, h.entered, h.submitErr, h.submitPanic
	h.mu.Unlock()
	if entered != nil {
		entered <- struct{}{}
	}
	if panics {
		panic("handler bug")
	}
	if block != nil {
		select {
		case <-block:
		case <-ctx.Done():
			return "", ctx.Err()
		}
	}
	if submitErr != nil {
		return "", submitErr
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	h.submitted = append(h.submitted, submitted{keyID: key.KeyID, mailFrom: mailFrom, rcpts: rcpts, data: data})
	return fmt.Sprintf("msg_%d", len(h.submitted)), nil
}

func (h *fakeHandler) set(f func(h *fakeHandler)) {
	h.mu.Lock()
	defer h.mu.Unlock()
	f(h)
}

func (h *fakeHandler) messages() []submitted {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]submitted(nil), h.submitted...)
}

func (h *fakeHandler) authCalls() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.auths
}

// fakeClock is the login limiter's clock, moved by hand.
type fakeClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

// testServer is a submission.Server on 127.0.0.1, both ports, with a fake
// Handler, recording the outcomes and the log.
type testServer struct {
	srv     *submission.Server
	addr    string // STARTTLS
	tlsAddr string // implicit TLS
	h       *fakeHandler
	log     *syncBuffer
	clock   *fakeClock
	client  *tls.Config // trusts the server's certificate
	served  chan error

	mu       sync.Mutex
	outcomes map[string]int
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

var (
	certOnce sync.Once
	testCert tls.Certificate
	certErr  error
)

// certificate is a self-signed certificate for certName, made once.
func certificate(t *testing.T) tls.Certificate {
	t.Helper()
	certOnce.Do(func() {
		// The certificate is kept in memory: the directory may go with
		// the test that made it.
		testCert, _, certErr = tlscert.SelfSigned(t.TempDir(), certName, time.Now())
	})
	if certErr != nil {
		t.Fatal(certErr)
	}
	return testCert
}

// startServer serves both ports on free ports of 127.0.0.1 until the test
// ends.
func startServer(t *testing.T, configure ...func(*submission.Server)) *testServer {
	t.Helper()
	cert := certificate(t)
	roots := x509.NewCertPool()
	roots.AddCert(cert.Leaf)
	ts := &testServer{
		h:        newFakeHandler(),
		log:      &syncBuffer{},
		clock:    &fakeClock{now: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)},
		client:   &tls.Config{RootCAs: roots, ServerName: certName},
		served:   make(chan error, 2),
		outcomes: map[string]int{},
	}
	ts.srv = &submission.Server{
		Handler:  ts.h,
		TLS:      tlscert.ServerConfig(cert),
		Hostname: "smtp.test",
		Log:      slog.New(slog.NewTextHandler(ts.log, &slog.HandlerOptions{Level: slog.LevelDebug})),
		Observe:  ts.observe,
		Now:      ts.clock.Now,
	}
	for _, f := range configure {
		f(ts.srv)
	}
	ln := listen(t)
	tln := listen(t)
	ts.addr, ts.tlsAddr = ln.Addr().String(), tln.Addr().String()
	go func() { ts.served <- ts.srv.Serve(ln) }()
	go func() { ts.served <- ts.srv.ServeTLS(tln) }()
	t.Cleanup(func() {
		_ = ts.srv.Close()
		for range 2 {
			select {
			case err := <-ts.served:
				if !errors.Is(err, submission.ErrServerClosed) {
					t.Errorf("Serve returned %v, want ErrServerClosed", err)
				}
			case <-time.After(10 * time.Second):
				t.Error("Serve did not return after Close")
			}
		}
		if strings.Contains(ts.log.String(), "s3cret") {
			t.Errorf("the log holds a key:\n%s", ts.log)
		}
	})
	return ts
}

func listen(t *testing.T) net.Listener {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	return ln
}

// dialTLS connects with go-smtp's client through STARTTLS and logs in
// with key ("" for no login).
func (ts *testServer) dialTLS(t *testing.T, key string) *gosmtp.Client {
	t.Helper()
	c, err := gosmtp.DialStartTLS(ts.addr, ts.client)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	if err := c.Hello("client.test"); err != nil {
		t.Fatal(err)
	}
	if key != "" {
		if err := c.Auth(sasl.NewPlainClient("", "anyone", key)); err != nil {
			t.Fatalf("AUTH PLAIN: %v", err)
		}
	}
	return c
}

// send runs one transaction and returns the reply to the message.
func send(c *gosmtp.Client, from string, to []string, msg []byte) (string, error) {
	if err := c.Mail(from, nil); err != nil {
		return "", err
	}
	for _, rcpt := range to {
		if err := c.Rcpt(rcpt, nil); err != nil {
			return "", err
		}
	}
	w, err := c.Data()
	if err != nil {
		return "", err
	}
	if _, err := w.Write(msg); err != nil {
		return "", err
	}
	resp, err := w.CloseWithResponse()
	if err != nil {
		return "", err
	}
	return resp.StatusText, nil
}

// smtpErr is err as an SMTP reply, nil when it is not one.
func smtpErr(err error) *gosmtp.SMTPError {
	var e *gosmtp.SMTPError
	if errors.As(err, &e) {
		return e
	}
	return nil
}

// wantReply fails unless err is the reply code and enhanced code.
func wantReply(t *testing.T, what string, err error, code int, enh gosmtp.EnhancedCode) *gosmtp.SMTPError {
	t.Helper()
	e := smtpErr(err)
	if e == nil || e.Code != code || e.EnhancedCode != enh {
		t.Fatalf("%s: %v, want %d %d.%d.%d", what, err, code, enh[0], enh[1], enh[2])
	}
	return e
}

func message(subject, body string) []byte {
	return []byte("From: App <app@example.com>\r\n" +
		"To: ann@example.net\r\n" +
		"Subject: " + subject + "\r\n" +
		"\r\n" + body)
}

// messageOfSize is a message of exactly n bytes, as the server counts
// them: CRLF line ends, no line beginning with a dot.
func messageOfSize(n int) []byte {
	var b bytes.Buffer
	b.WriteString("Subject: size\r\n\r\n")
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
	return dialRawFrom(t, addr, "")
}

// dialRawFrom connects from the local address from (any of 127/8 on
// Linux), or the default one when from is "".
func dialRawFrom(t *testing.T, addr, from string) *rawConn {
	t.Helper()
	d := net.Dialer{Timeout: 5 * time.Second}
	if from != "" {
		d.LocalAddr = &net.TCPAddr{IP: net.ParseIP(from)}
	}
	c, err := d.Dial("tcp", addr)
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

// reply reads one whole reply and returns its last line, waiting at most
// d.
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

// replyLines reads one whole reply, every line.
func (c *rawConn) replyLines() []string {
	c.t.Helper()
	_ = c.SetReadDeadline(time.Now().Add(10 * time.Second))
	var lines []string
	for {
		line, err := c.r.ReadString('\n')
		if err != nil {
			c.t.Fatalf("reading a reply: %v (so far %q)", err, lines)
		}
		lines = append(lines, strings.TrimRight(line, "\r\n"))
		if len(line) < 4 || line[3] != '-' {
			return lines
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

// startTLS says EHLO, STARTTLS and shakes hands, and says EHLO again.
func (c *rawConn) startTLS(cfg *tls.Config) {
	c.t.Helper()
	c.expect("220 ")
	c.send("EHLO client.test\r\n")
	c.expect("250 ")
	c.send("STARTTLS\r\n")
	c.expect("220 ")
	tc := tls.Client(c.Conn, cfg)
	_ = tc.SetDeadline(time.Now().Add(10 * time.Second))
	if err := tc.Handshake(); err != nil {
		c.t.Fatalf("TLS handshake: %v", err)
	}
	c.Conn, c.r = tc, bufio.NewReader(tc)
	c.send("EHLO client.test\r\n")
	c.expect("250 ")
}

// authPlain sends AUTH PLAIN with key as an initial response.
func (c *rawConn) authPlain(key string) {
	c.send("AUTH PLAIN " + base64.StdEncoding.EncodeToString([]byte("\x00anyone\x00"+key)) + "\r\n")
}

// closedWithin waits for the server to close the connection, discarding
// what it sends, and returns how long that took and what it sent.
func (c *rawConn) closedWithin(d time.Duration) (time.Duration, string, error) {
	start := time.Now()
	_ = c.SetReadDeadline(start.Add(d))
	rest, err := io.ReadAll(c.r)
	return time.Since(start), string(rest), err
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

// isReset reports a connection the server closed with unread input, which
// the kernel answers with RST: an end all the same.
func isReset(err error) bool {
	return err != nil && (strings.Contains(err.Error(), "reset by peer") || strings.Contains(err.Error(), "broken pipe"))
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
