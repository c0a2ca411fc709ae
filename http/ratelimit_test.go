package http_test

import (
	"bufio"
	"context"
	"crypto/tls"
	"crypto/x509"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/mailroom/mailroom"
	"github.com/mailroom/mailroom/apikey"
	"github.com/mailroom/mailroom/apitest"
	mhttp "github.com/mailroom/mailroom/http"
	"github.com/mailroom/mailroom/ratelimit"
	"github.com/mailroom/mailroom/storetest"
)

// limitedAPI is an API server with rate limiting on, over real TLS and a
// real store. Its clock stands still unless the test moves it, so that no
// bucket refills behind the test's back on a slow machine.
type limitedAPI struct {
	*apitest.Client
	ts      *httptest.Server
	metrics *prometheus.Registry
	mu      sync.Mutex
	now     time.Time
}

func (a *limitedAPI) Now() time.Time          { a.mu.Lock(); defer a.mu.Unlock(); return a.now }
func (a *limitedAPI) Advance(d time.Duration) { a.mu.Lock(); a.now = a.now.Add(d); a.mu.Unlock() }

func newLimitedAPI(t *testing.T, store mailroom.Store) *limitedAPI {
	t.Helper()
	log := slog.New(slog.DiscardHandler)
	limiter := ratelimit.New(store, log)
	if err := limiter.Reload(context.Background()); err != nil {
		t.Fatal(err)
	}
	a := &limitedAPI{metrics: prometheus.NewRegistry(), now: time.Now().UTC()}
	srv := &mhttp.Server{
		Store:   store,
		Auth:    &apikey.Authenticator{Keys: store, Usage: apikey.NewUsage(store, log), Now: time.Now},
		Keys:    &apikey.Service{Store: store, Now: a.Now},
		Log:     log,
		Metrics: a.metrics,
		Limiter: limiter,
		Now:     a.Now,
	}
	a.ts = httptest.NewUnstartedServer(srv.Handler())
	a.ts.EnableHTTP2 = true
	a.ts.StartTLS()
	t.Cleanup(a.ts.Close)
	a.Client = apitest.New(t, a.ts.URL, nil)
	a.HTTP = a.ts.Client()
	a.HTTP.Timeout = 30 * time.Second
	return a
}

// newAccountKey stores an account with a key holding scopes.
func newAccountKey(t *testing.T, s mailroom.Store, name string, scopes mailroom.Scopes) (*mailroom.Account, string) {
	t.Helper()
	acct := storetest.NewAccount(t, s, name)
	return acct, newKeyFor(t, s, acct, scopes)
}

func newKeyFor(t *testing.T, s mailroom.Store, acct *mailroom.Account, scopes mailroom.Scopes) string {
	t.Helper()
	full, k := mailroom.NewAPIKey(acct.ID, "test", scopes, time.Now())
	if err := s.CreateAPIKey(context.Background(), k); err != nil {
		t.Fatal(err)
	}
	return full
}

// wantRateHeaders checks the three RateLimit-* headers of a response.
func wantRateHeaders(t *testing.T, r *apitest.Response, limit, remaining, reset int) {
	t.Helper()
	for name, want := range map[string]int{"RateLimit-Limit": limit, "RateLimit-Remaining": remaining, "RateLimit-Reset": reset} {
		if got := r.Header.Get(name); got != strconv.Itoa(want) {
			t.Errorf("%s: %q, want %d (status %d)", name, got, want, r.Status)
		}
	}
}

// An account set to 2/s with a burst of 5 gets 5 requests through at once,
// then 429 rate_limited with Retry-After and the RateLimit headers, while
// another account is unaffected; a second later the account may go on.
func TestRateLimits(t *testing.T) {
	storetest.Each(t, func(t *testing.T, eng storetest.Engine) {
		store := eng.Open(t)
		acme, acmeKey := newAccountKey(t, store, "acme", mailroom.Scopes(mailroom.AllScopes))
		globex, globexKey := newAccountKey(t, store, "globex", mailroom.Scopes(mailroom.AllScopes))
		if _, err := store.UpdateAccountLimits(context.Background(), "acme", 2, 5); err != nil {
			t.Fatal(err)
		}
		api := newLimitedAPI(t, store)
		list := func(key string) *apitest.Response {
			return api.Do(apitest.Request{Method: "GET", Path: "/v1/api-keys", Key: key})
		}

		for i := range 5 {
			r := list(acmeKey)
			if r.Status != 200 {
				t.Fatalf("request %d of the burst: %d %s", i+1, r.Status, r.Body)
			}
			// Full again after (5 - remaining) tokens at 2/s, rounded up.
			wantRateHeaders(t, r, 5, 4-i, (i+2)/2)
		}
		r := list(acmeKey)
		wantError(t, r, 429, mailroom.ECodeRateLimited)
		if got := r.Header.Get("Retry-After"); got != "1" {
			t.Errorf("Retry-After %q, want 1 (a token every 0.5 s, rounded up to whole seconds)", got)
		}
		wantRateHeaders(t, r, 5, 0, 3)

		// Another account has its own bucket, on the defaults.
		r = list(globexKey)
		if r.Status != 200 {
			t.Fatalf("globex: %d %s", r.Status, r.Body)
		}
		wantRateHeaders(t, r, mailroom.DefaultBurst, mailroom.DefaultBurst-1, 1)

		// Refused before the scope check: a key of acme without the keys
		// scope hears 429, not 403, and learns nothing it may not do.
		sendOnly := newKeyFor(t, store, acme, mailroom.Scopes{mailroom.ScopeSend})
		wantError(t, list(sendOnly), 429, mailroom.ECodeRateLimited)

		// Refused before the body is read: a body that is not JSON at all
		// is 429 for acme, and 400 for globex, whose request goes on.
		bad := apitest.Request{Method: "POST", Path: "/v1/send", Key: acmeKey, Body: "{not json", NoCheck: true}
		wantError(t, api.Do(bad), 429, mailroom.ECodeRateLimited)
		bad.Key = globexKey
		wantError(t, api.Do(bad), 400, mailroom.ECodeInvalidJSON)

		// Errors after the limit carry the headers too.
		wantRateHeaders(t, list(newKeyFor(t, store, globex, mailroom.Scopes{mailroom.ScopeSend})), mailroom.DefaultBurst, mailroom.DefaultBurst-3, 1)

		// One token comes back every 0.5 s.
		api.Advance(500 * time.Millisecond)
		if r := list(acmeKey); r.Status != 200 {
			t.Fatalf("0.5 s later: %d %s", r.Status, r.Body)
		}
		wantError(t, list(acmeKey), 429, mailroom.ECodeRateLimited)

		// The operator sees who was refused, by account.
		if got := rateLimitedCount(t, api.metrics, acme.ID); got != 4 {
			t.Errorf("mailroom_rate_limited_total{account=%q} = %v, want 4", acme.ID, got)
		}
		if got := rateLimitedCount(t, api.metrics, globex.ID); got != 0 {
			t.Errorf("globex counted as limited: %v", got)
		}
	})
}

// A 429 never waits for the body: a client that announces one and never
// sends it gets its answer at once, over HTTP/1.1 and HTTP/2.
func TestRateLimitedBeforeBody(t *testing.T) {
	store := storetest.SQLite.Open(t)
	_, key := newAccountKey(t, store, "acme", mailroom.Scopes(mailroom.AllScopes))
	if _, err := store.UpdateAccountLimits(context.Background(), "acme", 1, 1); err != nil {
		t.Fatal(err)
	}
	api := newLimitedAPI(t, store)
	if r := api.Do(apitest.Request{Method: "GET", Path: "/v1/api-keys", Key: key}); r.Status != 200 {
		t.Fatalf("first request: %d %s", r.Status, r.Body)
	}

	t.Run("HTTP/1.1", func(t *testing.T) {
		roots := x509.NewCertPool()
		roots.AddCert(api.ts.Certificate())
		conn, err := tls.Dial("tcp", api.ts.Listener.Addr().String(), &tls.Config{RootCAs: roots, ServerName: "example.com", NextProtos: []string{"http/1.1"}})
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		conn.SetDeadline(time.Now().Add(10 * time.Second))
		_, err = io.WriteString(conn, "POST /v1/send HTTP/1.1\r\nHost: example.com\r\nAuthorization: Bearer "+key+
			"\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n\r\n{")
		if err != nil {
			t.Fatal(err)
		}
		resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
		if err != nil {
			t.Fatalf("no answer while the body was outstanding: %v", err)
		}
		resp.Body.Close()
		if resp.StatusCode != 429 || resp.Header.Get("Retry-After") == "" || resp.Header.Get("RateLimit-Remaining") != "0" {
			t.Fatalf("got %d %v", resp.StatusCode, resp.Header)
		}
	})

	t.Run("HTTP/2", func(t *testing.T) {
		body, never := io.Pipe()
		defer never.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		req, _ := http.NewRequestWithContext(ctx, "POST", api.ts.URL+"/v1/send", body)
		req.Header.Set("Authorization", "Bearer "+key)
		req.Header.Set("Content-Type", "application/json")
		resp, err := api.HTTP.Do(req)
		if err != nil {
			t.Fatalf("no answer while the body was outstanding: %v", err)
		}
		resp.Body.Close()
		if resp.ProtoMajor != 2 || resp.StatusCode != 429 || resp.Header.Get("Retry-After") == "" {
			t.Fatalf("got %s %d %v", resp.Proto, resp.StatusCode, resp.Header)
		}
	})
}

// rateLimitedCount reads mailroom_rate_limited_total for one account.
func rateLimitedCount(t *testing.T, reg *prometheus.Registry, accountID string) float64 {
	t.Helper()
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range families {
		if f.GetName() != "mailroom_rate_limited_total" {
			continue
		}
		for _, m := range f.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "account" && l.GetValue() == accountID {
					return m.GetCounter().GetValue()
				}
			}
		}
	}
	return 0
}
