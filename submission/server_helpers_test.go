package submission_test

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"fmt"
	"io"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/emersion/go-sasl"
	gosmtp "github.com/emersion/go-smtp"

	"github.com/mailroom/mailroom"
	"github.com/mailroom/mailroom/smtpserver"
	"github.com/mailroom/mailroom/smtpserver/smtpservertest"
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
	keyID      string
	mailFrom   string
	rcpts      []string
	requireTLS bool
	data       []byte
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

func (h *fakeHandler) Submit(ctx context.Context, key *mailroom.APIKey, env submission.Envelope, raw io.Reader) (string, error) {
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
	h.submitted = append(h.submitted, submitted{keyID: key.KeyID, mailFrom: env.MailFrom, rcpts: env.Rcpts, requireTLS: env.RequireTLS, data: data})
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
	srv      *submission.Server
	addr     string // STARTTLS
	tlsAddr  string // implicit TLS
	h        *fakeHandler
	log      *smtpservertest.Log
	outcomes smtpservertest.Outcomes
	clock    *fakeClock
	client   *tls.Config // trusts the server's certificate
	served   chan error
}

func (ts *testServer) outcome(name string) int { return ts.outcomes.Count(name) }

var (
	certOnce sync.Once
	testCert tls.Certificate
	certErr  error
)

// certificate is a self-signed certificate for certName, made once.
func certificate(t testing.TB) tls.Certificate {
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
func startServer(t testing.TB, configure ...func(*submission.Server)) *testServer {
	t.Helper()
	cert := certificate(t)
	roots := x509.NewCertPool()
	roots.AddCert(cert.Leaf)
	ts := &testServer{
		h:      newFakeHandler(),
		log:    &smtpservertest.Log{},
		clock:  &fakeClock{now: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)},
		client: &tls.Config{RootCAs: roots, ServerName: certName},
	}
	ts.srv = &submission.Server{
		Handler: ts.h,
		Now:     ts.clock.Now,
		Config: smtpserver.Config{
			TLS: tlscert.ServerConfig(cert), Hostname: "smtp.test", Log: ts.log.Logger(), Observe: ts.outcomes.Observe,
		},
	}
	for _, f := range configure {
		f(ts.srv)
	}
	// Checked after the server is closed, the cleanups running last
	// first.
	t.Cleanup(func() {
		if strings.Contains(ts.log.String(), "s3cret") {
			t.Errorf("the log holds a key:\n%s", ts.log)
		}
	})
	serving := smtpservertest.Serve(t, ts.srv.Close, ts.srv.Serve, ts.srv.ServeTLS)
	ts.addr, ts.tlsAddr, ts.served = serving.Addrs[0], serving.Addrs[1], serving.Served
	return ts
}

// dialTLS connects with go-smtp's client through STARTTLS and logs in
// with key ("" for no login).
func (ts *testServer) dialTLS(t testing.TB, key string) *gosmtp.Client {
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
	return data(c, msg)
}

// data sends msg in the open transaction and returns the reply.
func data(c *gosmtp.Client, msg []byte) (string, error) {
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

// wantReply fails unless err is the reply code and enhanced code.
func wantReply(t *testing.T, what string, err error, code int, enh gosmtp.EnhancedCode) *gosmtp.SMTPError {
	t.Helper()
	e := smtpservertest.SMTPError(err)
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
// them.
func messageOfSize(n int) []byte {
	return smtpservertest.MessageOfSize("Subject: size\r\n\r\n", n)
}

// authPlain sends AUTH PLAIN with key as an initial response.
func authPlain(c *smtpservertest.Conn, key string) {
	c.Send("AUTH PLAIN " + base64.StdEncoding.EncodeToString([]byte("\x00anyone\x00"+key)) + "\r\n")
}
