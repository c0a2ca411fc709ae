package client

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"
)

// fakeClock stands for the clock and the waits between retries: a wait
// is recorded and moves the clock, and takes no time.
type fakeClock struct {
	mu     sync.Mutex
	now    time.Time
	sleeps []time.Duration
	// onSleep, if set, runs before each wait (to cancel a context, say).
	onSleep func()
}

func (f *fakeClock) Now() time.Time {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.now
}

func (f *fakeClock) Sleep(ctx context.Context, d time.Duration) error {
	if f.onSleep != nil {
		f.onSleep()
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.sleeps = append(f.sleeps, d)
	f.now = f.now.Add(d)
	return nil
}

func (f *fakeClock) Sleeps() []time.Duration {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]time.Duration(nil), f.sleeps...)
}

// testClient returns a client of url whose waits are the fake clock's,
// whose jitter is none (each wait is the backoff's cap) and whose
// idempotency keys are key-1, key-2, ….
func testClient(url string, opts ...Option) (*Client, *fakeClock) {
	c := New(url, "mailroom_testkey", opts...)
	clock := &fakeClock{now: time.Now()}
	c.now, c.sleep = clock.Now, clock.Sleep
	c.jitter = func(d time.Duration) time.Duration { return d }
	c.spread = func(time.Duration) time.Duration { return 0 }
	var mu sync.Mutex
	n := 0
	c.newKey = func() string {
		mu.Lock()
		defer mu.Unlock()
		n++
		return fmt.Sprintf("key-%d", n)
	}
	return c, clock
}

// seen is a request as a test server received it.
type seen struct {
	Method, Path, RawPath, Query string
	Header                       http.Header
	Body                         string
}

// script serves answers in turn (the last one again once they run out)
// and records the requests.
type script struct {
	t       *testing.T
	mu      sync.Mutex
	answers []func(w http.ResponseWriter, r *http.Request)
	got     []seen
}

func newScript(t *testing.T, answers ...func(w http.ResponseWriter, r *http.Request)) (*script, *httptest.Server) {
	s := &script{t: t, answers: answers}
	srv := httptest.NewServer(s)
	t.Cleanup(srv.Close)
	return s, srv
}

func (s *script) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	s.mu.Lock()
	i := len(s.got)
	s.got = append(s.got, seen{Method: r.Method, Path: r.URL.Path, RawPath: r.URL.RawPath, Query: r.URL.RawQuery, Header: r.Header.Clone(), Body: string(body)})
	answer := s.answers[min(i, len(s.answers)-1)]
	s.mu.Unlock()
	answer(w, r)
}

func (s *script) Requests() []seen {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]seen(nil), s.got...)
}

// answer writes status with a JSON body and headers given as name, value
// pairs.
func answer(status int, body string, header ...string) func(w http.ResponseWriter, r *http.Request) {
	return func(w http.ResponseWriter, r *http.Request) {
		for i := 0; i+1 < len(header); i += 2 {
			w.Header().Set(header[i], header[i+1])
		}
		if w.Header().Get("X-Request-Id") == "" {
			w.Header().Set("X-Request-Id", "req_test")
		}
		if body != "" {
			w.Header().Set("Content-Type", "application/json")
		}
		w.WriteHeader(status)
		_, _ = io.WriteString(w, body)
	}
}

// hangUp closes the connection without an answer, after the request was
// read: a network error after the request was sent.
func hangUp(w http.ResponseWriter, r *http.Request) {
	conn, _, err := http.NewResponseController(w).Hijack()
	if err != nil {
		panic(err)
	}
	_ = conn.Close()
}

const (
	queued      = `{"status":"queued","messageId":"msg_01"}`
	rateLimited = `{"error":"rate_limited","message":"Too many requests; retry after 1 s."}`
	unavailable = `{"error":"service_unavailable","message":"The service is temporarily unavailable; retry with the same idempotency key."}`
)

// ptr is new(v) for the Go versions before 1.26 that this module supports.
func ptr[T any](v T) *T { return &v }
