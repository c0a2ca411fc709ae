package webhook

import (
	"context"
	"crypto/x509"
	"io"
	"log"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mailroom/mailroom"
	"github.com/mailroom/mailroom/poll"
	"github.com/mailroom/mailroom/sealer"
	"github.com/mailroom/mailroom/sqlstore"
	"github.com/mailroom/mailroom/storetest"
)

// world is a webhook environment of real parts: a store of the engine
// under test, the Service that cmd/mailroom serves (endpoints,
// sealed secrets, test events, SigningKeys), an account, and HTTPS
// receivers on loopback. Only the clock is the test's: it drives retries
// without waiting for them.
type world struct {
	t     *testing.T
	store *sqlstore.Store
	svc   *Service
	clock *clock
	acct  *mailroom.Account
	roots *x509.CertPool
}

func newWorld(t *testing.T, e storetest.Engine) *world {
	t.Helper()
	return newWorldOn(t, e.Open(t))
}

// newWorldOn is newWorld on a store the test opened.
func newWorldOn(t *testing.T, store *sqlstore.Store) *world {
	t.Helper()
	seal, err := sealer.New([]byte(strings.Repeat("k", sealer.KeySize)))
	if err != nil {
		t.Fatal(err)
	}
	// The clock starts at the real time, so that a verifier with a real
	// clock (the Standard Webhooks library) accepts the timestamps.
	c := &clock{now: time.Now().UTC().Truncate(time.Second)}
	w := &world{t: t, store: store, clock: c, roots: x509.NewCertPool(),
		acct: storetest.NewAccount(t, store, "acme")}
	w.svc = &Service{Store: store, Sealer: seal, Now: c.Now,
		// The URLs are the test's receivers on loopback: what a URL
		// that resolved to a public address when it was saved may
		// resolve to later (DNS rebinding), which the dispatcher's guard
		// is for.
		CheckURL: func(context.Context, string) error { return nil }}
	return w
}

// clock is the test's time: it moves only when the test says.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *clock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

// dispatcher returns a Dispatcher set up as cmd/mailroom sets one up, with
// private targets allowed (the receivers are on loopback) and the
// receivers' certificate trusted.
func (w *world) dispatcher() *Dispatcher {
	return &Dispatcher{Store: w.store, Keys: w.svc.SigningKeys, Node: "node-a", AllowPrivate: true,
		Version: "test", RootCAs: w.roots, Log: testLog(w.t), Now: w.clock.Now}
}

// start runs d until the test ends; stop ends it early and waits for it.
func (w *world) start(d *Dispatcher) (stop func()) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); d.Run(ctx) }()
	w.svc.Wake = d.Wake
	stop = func() { cancel(); <-done }
	w.t.Cleanup(stop)
	return stop
}

// endpoint creates an endpoint at url through the service, and returns it
// with its secret (shown once, as to a customer).
func (w *world) endpoint(url string) (*mailroom.WebhookEndpoint, string) {
	w.t.Helper()
	all := []string{mailroom.AllEventTypes}
	e, secret, err := w.svc.Create(context.Background(), w.acct.ID, &Request{URL: &url, Events: &all})
	if err != nil {
		w.t.Fatalf("create webhook %s: %v", url, err)
	}
	return e, secret
}

// testEvent sends a webhook.test event to e, as POST /v1/webhooks/{id}/test
// does.
func (w *world) testEvent(e *mailroom.WebhookEndpoint) *mailroom.Event {
	w.t.Helper()
	ev, err := w.svc.Test(context.Background(), w.acct.ID, e.ID)
	if err != nil {
		w.t.Fatalf("test event: %v", err)
	}
	return ev
}

// attempts lists e's attempts, oldest first.
func (w *world) attempts(e *mailroom.WebhookEndpoint) []*mailroom.WebhookAttempt {
	w.t.Helper()
	got, _, err := w.store.ListWebhookAttempts(context.Background(), w.acct.ID, e.ID, mailroom.WebhookAttemptFilter{}, mailroom.Page{Limit: mailroom.MaxPageLimit})
	if err != nil {
		w.t.Fatal(err)
	}
	for i, j := 0, len(got)-1; i < j; i, j = i+1, j-1 {
		got[i], got[j] = got[j], got[i]
	}
	return got
}

// waitAttempts waits until e has n attempts logged, and returns them.
func (w *world) waitAttempts(e *mailroom.WebhookEndpoint, n int) []*mailroom.WebhookAttempt {
	w.t.Helper()
	var got []*mailroom.WebhookAttempt
	poll.Until(w.t, 10*time.Second, "attempts logged", func() bool { got = w.attempts(e); return len(got) >= n })
	if len(got) != n {
		w.t.Fatalf("%d attempts logged, want %d: %+v", len(got), n, got)
	}
	return got
}

// receiver is an HTTPS endpoint on loopback that keeps what it is sent.
type receiver struct {
	srv    *httptest.Server
	mu     sync.Mutex
	got    []*received
	answer func(n int, w http.ResponseWriter, r *http.Request)
}

type received struct {
	header http.Header
	body   []byte
	path   string
}

// receiver starts an HTTPS receiver; answer writes the response to the
// request numbered n (from 0), and nil answers 204.
func (w *world) receiver(answer func(n int, rw http.ResponseWriter, r *http.Request)) *receiver {
	rc := &receiver{answer: answer}
	rc.srv = httptest.NewUnstartedServer(rc)
	rc.srv.Config.ErrorLog = discardLog()
	rc.srv.StartTLS()
	w.t.Cleanup(rc.srv.Close)
	w.roots.AddCert(rc.srv.Certificate())
	return rc
}

func (rc *receiver) ServeHTTP(rw http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	rc.mu.Lock()
	n := len(rc.got)
	rc.got = append(rc.got, &received{header: r.Header.Clone(), body: body, path: r.URL.Path})
	rc.mu.Unlock()
	if rc.answer == nil {
		rw.WriteHeader(http.StatusNoContent)
		return
	}
	rc.answer(n, rw, r)
}

func (rc *receiver) URL() string { return rc.srv.URL + "/hooks/mailroom" }

func (rc *receiver) requests() []*received {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return append([]*received(nil), rc.got...)
}

// waitRequests waits until the receiver has had n requests, and returns
// them.
func (rc *receiver) waitRequests(t *testing.T, n int) []*received {
	t.Helper()
	var got []*received
	poll.Until(t, 10*time.Second, "requests received", func() bool { got = rc.requests(); return len(got) >= n })
	return got
}

// secretKey is the signing key a whsec_ secret encodes.
func secretKey(t *testing.T, secret string) []byte {
	t.Helper()
	key, err := ParseSecret(secret)
	if err != nil {
		t.Fatal(err)
	}
	return key
}

// verify checks a request as a consumer does, with Verify.
func (r *received) verify(key []byte, now time.Time) error {
	return Verify(key, r.header.Get("webhook-id"), r.header.Get("webhook-timestamp"),
		r.header.Get("webhook-signature"), r.body, now)
}

func testLog(t *testing.T) *slog.Logger {
	return slog.New(slog.NewTextHandler(tWriter{t}, &slog.HandlerOptions{Level: slog.LevelDebug}))
}

type tWriter struct{ t *testing.T }

func (w tWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimSpace(string(p)))
	return len(p), nil
}

// discardLog quiets a receiver's own log (TLS handshakes the test cuts
// short on purpose).
func discardLog() *log.Logger { return log.New(io.Discard, "", 0) }
