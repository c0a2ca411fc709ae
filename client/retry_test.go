package client

import (
	"context"
	"errors"
	"math"
	"net"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"
)

func send(t *testing.T, c *Client) (*SendResult, error) {
	t.Helper()
	return c.Send(context.Background(), &SendRequest{From: "orders@shop.example", To: []string{"ann@example.com"}, Subject: "Hi", Text: "Hello"})
}

func TestRetry429ThenSuccess(t *testing.T) {
	s, srv := newScript(t, answer(429, rateLimited), answer(429, rateLimited), answer(200, queued))
	c, clock := testClient(srv.URL)
	res, err := send(t, c)
	if err != nil {
		t.Fatal(err)
	}
	if res.Status != SendQueued || res.MessageID != "msg_01" {
		t.Errorf("result %+v", res)
	}
	if n := len(s.Requests()); n != 3 {
		t.Errorf("%d requests, want 3", n)
	}
	// No Retry-After: the backoff, doubling from 0.5 s (the jitter is none).
	if got, want := clock.Sleeps(), []time.Duration{500 * time.Millisecond, time.Second}; !slices.Equal(got, want) {
		t.Errorf("waits %v, want %v", got, want)
	}
}

func TestRetryAfterHonoured(t *testing.T) {
	s, srv := newScript(t, answer(429, rateLimited, "Retry-After", "7"), answer(200, queued))
	c, clock := testClient(srv.URL)
	if _, err := send(t, c); err != nil {
		t.Fatal(err)
	}
	if got, want := clock.Sleeps(), []time.Duration{7 * time.Second}; !slices.Equal(got, want) {
		t.Errorf("waits %v, want %v", got, want)
	}
	if n := len(s.Requests()); n != 2 {
		t.Errorf("%d requests, want 2", n)
	}
}

func TestRetryAfterAsADate(t *testing.T) {
	_, srv := newScript(t, func(w http.ResponseWriter, r *http.Request) {
		answer(503, unavailable, "Retry-After", time.Now().Add(10*time.Second).UTC().Format(http.TimeFormat))(w, r)
	}, answer(200, queued))
	c, clock := testClient(srv.URL)
	if _, err := send(t, c); err != nil {
		t.Fatal(err)
	}
	if s := clock.Sleeps(); len(s) != 1 || s[0] < 8*time.Second || s[0] > 11*time.Second {
		t.Errorf("waits %v, want about 10 s", s)
	}
}

// A wait that would end after the caller's deadline is not begun: the last
// error comes back at once, with its Retry-After.
func TestRetryAfterPastTheDeadline(t *testing.T) {
	s, srv := newScript(t, answer(429, rateLimited, "Retry-After", "5"), answer(200, queued))
	c, clock := testClient(srv.URL)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	_, err := c.Send(ctx, &SendRequest{To: []string{"ann@example.com"}})
	var e *Error
	if !errors.As(err, &e) || e.Status != 429 || e.Code != CodeRateLimited || e.RetryAfter != 5*time.Second {
		t.Fatalf("err %#v, want the 429 with Retry-After 5 s", err)
	}
	if n := len(s.Requests()); n != 1 || len(clock.Sleeps()) != 0 {
		t.Errorf("%d requests and waits %v, want 1 and none", n, clock.Sleeps())
	}
}

// A Retry-After longer than the backoff's cap is the caller's to wait.
func TestRetryAfterOverTheCap(t *testing.T) {
	s, srv := newScript(t, answer(429, rateLimited, "Retry-After", "60"), answer(200, queued))
	c, clock := testClient(srv.URL, WithRetryBackoff(time.Second, 10*time.Second))
	_, err := send(t, c)
	if !IsCode(err, CodeRateLimited) {
		t.Fatalf("err %v, want rate_limited", err)
	}
	if n := len(s.Requests()); n != 1 || len(clock.Sleeps()) != 0 {
		t.Errorf("%d requests and waits %v, want 1 and none", n, clock.Sleeps())
	}
}

// A 503 is retried with the same idempotency key and the same body, so
// the service sends once.
func Test503RetriedWithTheSameIdempotencyKey(t *testing.T) {
	s, srv := newScript(t, answer(503, unavailable, "Retry-After", "1"), answer(503, unavailable, "Retry-After", "1"), answer(200, queued))
	c, clock := testClient(srv.URL)
	if _, err := send(t, c); err != nil {
		t.Fatal(err)
	}
	reqs := s.Requests()
	if len(reqs) != 3 {
		t.Fatalf("%d requests, want 3", len(reqs))
	}
	for i, r := range reqs {
		if k := r.Header.Values("Idempotency-Key"); len(k) != 1 || k[0] != "key-1" {
			t.Errorf("request %d: Idempotency-Key %q, want the one key made for the call", i, k)
		}
		if r.Body != reqs[0].Body || r.Body == "" {
			t.Errorf("request %d: body %q, want %q", i, r.Body, reqs[0].Body)
		}
		if r.Header.Get("Content-Type") != "application/json" || r.Header.Get("Authorization") != "Bearer mailroom_testkey" {
			t.Errorf("request %d: headers %v", i, r.Header)
		}
	}
	if got, want := clock.Sleeps(), []time.Duration{time.Second, time.Second}; !slices.Equal(got, want) {
		t.Errorf("waits %v, want %v", got, want)
	}
	// The next call is another request: another key.
	if _, err := send(t, c); err != nil {
		t.Fatal(err)
	}
	if k := s.Requests()[3].Header.Get("Idempotency-Key"); k != "key-2" {
		t.Errorf("the next call's key is %q, want key-2", k)
	}
}

func TestSendKeepsTheCallersKey(t *testing.T) {
	s, srv := newScript(t, answer(200, queued))
	c, _ := testClient(srv.URL)
	if _, err := c.Send(context.Background(), &SendRequest{To: []string{"ann@example.com"}, IdempotencyKey: "order-42"}); err != nil {
		t.Fatal(err)
	}
	r := s.Requests()[0]
	if r.Header.Get("Idempotency-Key") != "" || !strings.Contains(r.Body, `"idempotencyKey":"order-42"`) {
		t.Errorf("header %q, body %s: want the caller's key in the body alone", r.Header.Get("Idempotency-Key"), r.Body)
	}
}

// The service refuses the header on a batch: each item gets a key of its
// own, the same on every attempt, and the caller's slice is left alone.
func TestSendBatchKeysEachItem(t *testing.T) {
	s, srv := newScript(t, answer(503, unavailable), answer(200, `{"data":[{"status":"queued","messageId":"msg_1"},{"error":"validation_error","message":"bad","details":[{"field":"to","message":"not an address","index":0}]}],"accepted":1,"failed":1}`))
	c, _ := testClient(srv.URL)
	msgs := []SendRequest{{To: []string{"ann@example.com"}}, {To: []string{"bob@"}, IdempotencyKey: "mine"}}
	res, err := c.SendBatch(context.Background(), msgs)
	if err != nil {
		t.Fatal(err)
	}
	reqs := s.Requests()
	if len(reqs) != 2 || reqs[0].Body != reqs[1].Body {
		t.Fatalf("want two equal attempts, got %+v", reqs)
	}
	if h := reqs[0].Header.Get("Idempotency-Key"); h != "" {
		t.Errorf("a batch was sent an Idempotency-Key header %q", h)
	}
	if !strings.Contains(reqs[0].Body, `"idempotencyKey":"key-1"`) || !strings.Contains(reqs[0].Body, `"idempotencyKey":"mine"`) {
		t.Errorf("body %s: want key-1 and mine", reqs[0].Body)
	}
	if msgs[0].IdempotencyKey != "" {
		t.Errorf("the caller's request was changed: %+v", msgs[0])
	}
	if res.Accepted != 1 || res.Failed != 1 || !res.Data[0].OK() || res.Data[0].Result().MessageID != "msg_1" {
		t.Errorf("result %+v", res)
	}
	if e := res.Data[1].ErrorBody(); res.Data[1].OK() || e.Error != CodeValidation || e.Details[0].Field != "to" || *e.Details[0].Index != 0 {
		t.Errorf("item 1: %+v", res.Data[1])
	}
}

func TestNonRetryable4xxReturnedAtOnce(t *testing.T) {
	body := `{"error":"validation_error","message":"The request has 2 problems.","details":[{"field":"to","message":"not an address","index":1},{"field":"subject","message":"is required"}]}`
	s, srv := newScript(t, answer(400, body, "X-Request-Id", "req_abc"))
	c, clock := testClient(srv.URL)
	_, err := send(t, c)
	var e *Error
	if !errors.As(err, &e) {
		t.Fatalf("err %T %v, want *Error", err, err)
	}
	if e.Status != 400 || e.Code != CodeValidation || e.RequestID != "req_abc" || len(e.Details) != 2 ||
		e.Details[0].Field != "to" || e.Details[0].Index == nil || *e.Details[0].Index != 1 || e.Details[1].Index != nil {
		t.Errorf("error %+v", e)
	}
	if want := "mailroom: 400 validation_error: The request has 2 problems. — to[1]: not an address; subject: is required (request req_abc)"; e.Error() != want {
		t.Errorf("Error() = %q, want %q", e.Error(), want)
	}
	if e.Retryable() || !IsCode(err, CodeValidation) || IsCode(err, CodeNotFound) {
		t.Error("Retryable or IsCode is wrong")
	}
	if n := len(s.Requests()); n != 1 || len(clock.Sleeps()) != 0 {
		t.Errorf("%d requests, waits %v: a 400 is not retried", n, clock.Sleeps())
	}
}

func TestRetriesRunOut(t *testing.T) {
	s, srv := newScript(t, answer(503, unavailable))
	c, clock := testClient(srv.URL, WithMaxRetries(2), WithRetryBackoff(time.Second, 3*time.Second))
	_, err := c.ListDomains(context.Background(), nil)
	if !IsCode(err, CodeServiceUnavailable) {
		t.Fatalf("err %v", err)
	}
	if n := len(s.Requests()); n != 3 {
		t.Errorf("%d requests, want 3", n)
	}
	if got, want := clock.Sleeps(), []time.Duration{time.Second, 2 * time.Second}; !slices.Equal(got, want) {
		t.Errorf("waits %v, want %v", got, want)
	}
}

func TestBackoffCapAndJitter(t *testing.T) {
	c := New("http://x", "k")
	var caps []time.Duration
	for n := range 8 {
		caps = append(caps, c.backoffCap(n))
	}
	want := []time.Duration{500 * time.Millisecond, time.Second, 2 * time.Second, 4 * time.Second, 8 * time.Second, 16 * time.Second, 30 * time.Second, 30 * time.Second}
	if !slices.Equal(caps, want) {
		t.Errorf("caps %v, want %v", caps, want)
	}
	for range 1000 {
		if d := equalJitter(time.Second); d < time.Second/2 || d > time.Second {
			t.Fatalf("jitter %v out of [0.5s, 1s]", d)
		}
	}
}

// A connection that drops after the request was sent is retried where a
// second request is harmless: a send under its idempotency key, a read.
func TestNetworkErrorRetried(t *testing.T) {
	s, srv := newScript(t, hangUp, answer(200, queued))
	c, clock := testClient(srv.URL)
	if _, err := send(t, c); err != nil {
		t.Fatal(err)
	}
	reqs := s.Requests()
	if len(reqs) != 2 || reqs[0].Header.Get("Idempotency-Key") != reqs[1].Header.Get("Idempotency-Key") {
		t.Errorf("requests %+v: want two under one key", reqs)
	}
	if len(clock.Sleeps()) != 1 {
		t.Errorf("waits %v, want one", clock.Sleeps())
	}

	s, srv = newScript(t, hangUp, answer(200, `{"data":[],"nextCursor":null}`))
	c, _ = testClient(srv.URL)
	if _, err := c.ListMessages(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	if n := len(s.Requests()); n != 2 {
		t.Errorf("%d requests, want 2", n)
	}
}

// A create that may have been acted on is not sent again after a network
// error: a second domain or key would be made.
func TestNetworkErrorAfterSendingNotRetriedForCreates(t *testing.T) {
	s, srv := newScript(t, hangUp, answer(201, `{}`))
	c, clock := testClient(srv.URL)
	_, err := c.CreateDomain(context.Background(), "example.com")
	if err == nil {
		t.Fatal("no error")
	}
	var e *Error
	if errors.As(err, &e) {
		t.Errorf("a network error came back as %v", e)
	}
	if n := len(s.Requests()); n != 1 || len(clock.Sleeps()) != 0 {
		t.Errorf("%d requests, waits %v: want one attempt", n, clock.Sleeps())
	}
	// A 503 is the service refusing before acting: retried.
	s, srv = newScript(t, answer(503, unavailable), answer(201, `{"name":"example.com","status":"pending","records":[],"createdAt":"2026-11-22T10:00:00Z","verifiedAt":null,"lastCheckedAt":null,"nextCheckAt":null}`))
	c, _ = testClient(srv.URL)
	d, err := c.CreateDomain(context.Background(), "example.com")
	if err != nil || d.Name != "example.com" || len(s.Requests()) != 2 {
		t.Errorf("domain %+v, err %v, %d requests", d, err, len(s.Requests()))
	}
}

// A connection that could not be made carried nothing: retried for every
// route.
func TestDialErrorRetried(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close() // nothing listens there now
	c, clock := testClient("http://"+addr, WithMaxRetries(3))
	_, err = c.CreateAPIKey(context.Background(), &APIKeyCreateRequest{Name: "x", Scopes: []Scope{ScopeSend}})
	var op *net.OpError
	if !errors.As(err, &op) || op.Op != "dial" {
		t.Fatalf("err %v, want a dial error", err)
	}
	if n := len(clock.Sleeps()); n != 3 {
		t.Errorf("%d waits, want 3", n)
	}
}

// One attempt that takes longer than WithTimeout is a network error.
func TestAttemptTimeoutRetried(t *testing.T) {
	release := make(chan struct{})
	t.Cleanup(func() { close(release) })
	s, srv := newScript(t, func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-release:
		}
	}, answer(200, `{"status":"ok"}`))
	c, _ := testClient(srv.URL, WithTimeout(50*time.Millisecond))
	st, err := c.Health(context.Background())
	if err != nil || st.Status != "ok" {
		t.Fatalf("status %+v, err %v", st, err)
	}
	if n := len(s.Requests()); n != 2 {
		t.Errorf("%d requests, want 2", n)
	}
}

func TestContextCancelStopsRetrying(t *testing.T) {
	s, srv := newScript(t, answer(503, unavailable))
	c, clock := testClient(srv.URL)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	clock.onSleep = cancel // canceled while waiting for the first retry
	_, err := c.Send(ctx, &SendRequest{To: []string{"ann@example.com"}})
	if !errors.Is(err, context.Canceled) {
		t.Errorf("err %v, want context.Canceled", err)
	}
	if !IsCode(err, CodeServiceUnavailable) {
		t.Errorf("err %v, want the last attempt's 503 too", err)
	}
	if n := len(s.Requests()); n != 1 {
		t.Errorf("%d requests, want 1", n)
	}
	// Canceled before the first attempt: nothing is sent.
	_, err = c.Send(ctx, &SendRequest{To: []string{"ann@example.com"}})
	if !errors.Is(err, context.Canceled) || len(s.Requests()) != 1 {
		t.Errorf("err %v, %d requests", err, len(s.Requests()))
	}
}

// A context canceled while a request is in flight ends the call at once,
// not retried as a network error.
func TestContextCanceledInFlight(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	s, srv := newScript(t, func(w http.ResponseWriter, r *http.Request) {
		cancel()
		<-r.Context().Done()
	})
	c, clock := testClient(srv.URL)
	_, err := c.GetMessage(ctx, "msg_01")
	if !errors.Is(err, context.Canceled) {
		t.Errorf("err %v, want context.Canceled", err)
	}
	if n := len(s.Requests()); n != 1 || len(clock.Sleeps()) != 0 {
		t.Errorf("%d requests, waits %v", n, clock.Sleeps())
	}
}

func TestReadyIsNotRetried(t *testing.T) {
	s, srv := newScript(t, answer(503, unavailable, "Retry-After", "1"))
	c, _ := testClient(srv.URL)
	if _, err := c.Ready(context.Background()); !IsCode(err, CodeServiceUnavailable) {
		t.Fatalf("err %v", err)
	}
	if n := len(s.Requests()); n != 1 {
		t.Errorf("%d requests, want 1", n)
	}
}

func TestParseRetryAfter(t *testing.T) {
	now := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	longest := time.Duration(math.MaxInt64).Truncate(time.Second)
	for v, want := range map[string]time.Duration{
		"": 0, "1": time.Second, " 30 ": 30 * time.Second, "0": 0, "-5": 0, "soon": 0,
		"Sun, 22 Nov 2026 10:00:09 GMT": 9 * time.Second, "Sun, 22 Nov 2026 09:00:00 GMT": 0,
		// As sent, not cut to a day; a number past time.Duration's range
		// is its longest, not "absent".
		"999999": 999999 * time.Second, "9223372036": 9223372036 * time.Second, "9223372037": longest,
		"99999999999999999999999": longest, "-99999999999999999999999": 0,
	} {
		if got := parseRetryAfter(v, now); got != want {
			t.Errorf("parseRetryAfter(%q) = %v, want %v", v, got, want)
		}
	}
}

// A Retry-After too large for a time.Duration is a very long wait, so the
// error comes back at once with it, as for any wait past the backoff's
// cap, rather than being taken for no Retry-After and retried.
func TestRetryAfterTooLargeForADuration(t *testing.T) {
	for _, v := range []string{"999999", "99999999999999999999999"} {
		s, srv := newScript(t, answer(429, rateLimited, "Retry-After", v), answer(200, queued))
		c, clock := testClient(srv.URL)
		_, err := send(t, c)
		var e *Error
		if !errors.As(err, &e) || e.Status != 429 || e.RetryAfter < 999999*time.Second {
			t.Errorf("Retry-After %s: err %#v, want the 429 with the server's wait", v, err)
		}
		if n := len(s.Requests()); n != 1 || len(clock.Sleeps()) != 0 {
			t.Errorf("Retry-After %s: %d requests and waits %v, want 1 and none", v, n, clock.Sleeps())
		}
	}
}

// Even with a cap that takes the longest Retry-After, the spread added to
// it cannot overflow into a negative wait.
func TestRetryAfterSpreadDoesNotOverflow(t *testing.T) {
	_, srv := newScript(t, answer(503, unavailable, "Retry-After", "99999999999999999999999"), answer(200, queued))
	c, clock := testClient(srv.URL, WithRetryBackoff(time.Second, time.Duration(math.MaxInt64)))
	c.spread = func(d time.Duration) time.Duration { return d } // the most it adds
	if _, err := send(t, c); err != nil {
		t.Fatal(err)
	}
	if s := clock.Sleeps(); len(s) != 1 || s[0] < 290*365*24*time.Hour {
		t.Errorf("waits %v, want the longest", s)
	}
}
