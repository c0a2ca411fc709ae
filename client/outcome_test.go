package client

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"
)

// A send whose every attempt failed on the network may have been accepted:
// its error says so and names the key to send again with.
func TestSendOutcomeUnknown(t *testing.T) {
	s, srv := newScript(t, hangUp)
	c, _ := testClient(srv.URL, WithMaxRetries(2))
	_, err := send(t, c)
	if !errors.Is(err, ErrOutcomeUnknown) {
		t.Fatalf("err = %v, want ErrOutcomeUnknown", err)
	}
	key := s.Requests()[0].Header.Get("Idempotency-Key")
	if key == "" || !strings.Contains(err.Error(), key) {
		t.Errorf("err %q does not name the key %q", err, key)
	}
	// A refusal is an answer, not an unknown outcome; nor is a read's
	// network failure.
	_, srv = newScript(t, answer(400, `{"error":"validation_error","message":"bad"}`))
	c, _ = testClient(srv.URL)
	if _, err := send(t, c); errors.Is(err, ErrOutcomeUnknown) {
		t.Errorf("a 400 is %v", err)
	}
	_, srv = newScript(t, hangUp)
	c, _ = testClient(srv.URL, WithMaxRetries(0))
	if _, err := c.ListMessages(context.Background(), nil); err == nil || errors.Is(err, ErrOutcomeUnknown) {
		t.Errorf("a read's network error is %v", err)
	}
}

// A proxy's 502 or 504 is retried for a send (under its key), not for a
// create that may have been acted on.
func TestGatewayErrorsRetriedWhereSafe(t *testing.T) {
	s, srv := newScript(t, answer(502, "<html>Bad Gateway</html>"), answer(504, ""), answer(200, queued))
	c, _ := testClient(srv.URL)
	if res, err := send(t, c); err != nil || res.MessageID != "msg_01" || len(s.Requests()) != 3 {
		t.Fatalf("send: %+v %v after %d requests", res, err, len(s.Requests()))
	}
	s, srv = newScript(t, answer(502, ""), answer(201, `{}`))
	c, _ = testClient(srv.URL)
	var e *Error
	if _, err := c.CreateDomain(context.Background(), "example.com"); !errors.As(err, &e) || e.Status != 502 || len(s.Requests()) != 1 {
		t.Fatalf("create: %v after %d requests", err, len(s.Requests()))
	}
}

// A redirect comes back to the caller as an error, never followed: a POST
// must not become a GET, nor the key go where the caller did not send it.
func TestRedirectsNotFollowed(t *testing.T) {
	s, srv := newScript(t, answer(301, "", "Location", "https://elsewhere.example/v1/send"), answer(200, queued))
	c, _ := testClient(srv.URL)
	_, err := send(t, c)
	var e *Error
	if !errors.As(err, &e) || e.Status != 301 || len(s.Requests()) != 1 {
		t.Fatalf("err %v after %d requests, want the 301 after one", err, len(s.Requests()))
	}
}

// A base URL that cannot be called fails every call at once, saying why.
func TestBadBaseURL(t *testing.T) {
	for _, base := range []string{"", "not a url", "ftp://example.com", "https://example.com/?x=1", "https://user@example.com"} {
		c := New(base, "k")
		if _, err := c.Health(context.Background()); err == nil || !strings.Contains(err.Error(), "base URL") {
			t.Errorf("New(%q).Health: %v", base, err)
		}
	}
}

// Clients told the same Retry-After come back spread over up to a fifth
// more, not at one instant.
func TestRetryAfterSpread(t *testing.T) {
	_, srv := newScript(t, answer(429, rateLimited, "Retry-After", "5"), answer(200, queued))
	c, clock := testClient(srv.URL)
	c.spread = func(max time.Duration) time.Duration { return max }
	if _, err := send(t, c); err != nil {
		t.Fatal(err)
	}
	if got := clock.Sleeps(); len(got) != 1 || got[0] != 6*time.Second {
		t.Errorf("waits %v, want 5 s and a fifth", got)
	}
	if d := uniformUpTo(time.Second); d < 0 || d > time.Second {
		t.Errorf("spread %v out of [0, 1s]", d)
	}
}
