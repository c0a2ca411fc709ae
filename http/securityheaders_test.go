package http_test

import (
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/mailroom/mailroom/apitest"
	"github.com/mailroom/mailroom/dashboard"
	"github.com/mailroom/mailroom/delivery"
	mhttp "github.com/mailroom/mailroom/http"
	"github.com/mailroom/mailroom/storetest"
)

// The header fields a browser applies, as every answer of the API carries
// them over HTTPS: the JSON API's, an error's, the OpenAPI document's
// (which keeps its own caching), and the dashboard's (which keeps its own
// page policy).
func TestSecurityHeadersOnEveryAnswer(t *testing.T) {
	e := newEnvWithStore(t, storetest.SQLite.Open(t), func(s *mhttp.Server, _ *delivery.Deliverer) { s.Dashboard = dashboard.New() })
	common := map[string]string{
		"Strict-Transport-Security":    "max-age=31536000",
		"X-Content-Type-Options":       "nosniff",
		"X-Frame-Options":              "DENY",
		"Referrer-Policy":              "no-referrer",
		"Cross-Origin-Opener-Policy":   "same-origin",
		"Cross-Origin-Resource-Policy": "same-origin",
	}
	api := map[string]string{
		"Content-Security-Policy": "default-src 'none'; frame-ancestors 'none'",
		"Cache-Control":           "no-store",
	}
	for _, tc := range []struct {
		name string
		req  apitest.Request
		want map[string]string
	}{
		{"an authenticated read", apitest.Request{Method: "GET", Path: "/v1/api-keys/current", Key: e.admin}, api},
		{"a 401", apitest.Request{Method: "GET", Path: "/v1/domains"}, api},
		{"a 404", apitest.Request{Method: "GET", Path: "/v1/nothing"}, api},
		{"the health check", apitest.Request{Method: "GET", Path: "/healthz"}, api},
		{"the OpenAPI document", apitest.Request{Method: "GET", Path: "/v1/openapi.json", NoCheck: true},
			map[string]string{"Content-Security-Policy": "default-src 'none'; frame-ancestors 'none'", "Cache-Control": "public, max-age=300"}},
		{"the dashboard", apitest.Request{Method: "GET", Path: "/messages", NoCheck: true},
			map[string]string{"Content-Security-Policy": dashboard.ContentSecurityPolicy, "Cache-Control": "no-cache"}},
		{"an unsubscribe page", apitest.Request{Method: "GET", Path: "/v1/unsubscribe/not-a-token", NoCheck: true},
			map[string]string{"Cache-Control": "no-store"}},
	} {
		r := e.Do(tc.req)
		for _, want := range []map[string]string{common, tc.want} {
			for name, value := range want {
				if got := r.Header.Get(name); got != value {
					t.Errorf("%s (%d): %s: %q, want %q", tc.name, r.Status, name, got, value)
				}
			}
		}
	}
}

// Strict-Transport-Security is left out under serve --dev (NoHSTS), where
// it would hold a browser to a test certificate for a year, and on a
// connection without TLS (RFC 6797 §7.2); the other fields stay.
func TestNoHSTSUnderDevOrWithoutTLS(t *testing.T) {
	quiet := slog.New(slog.DiscardHandler)
	for _, tc := range []struct {
		name string
		srv  *httptest.Server
	}{
		{"--dev", httptest.NewTLSServer((&mhttp.Server{Log: quiet, NoHSTS: true}).Handler())},
		{"clear text", httptest.NewServer((&mhttp.Server{Log: quiet}).Handler())},
	} {
		defer tc.srv.Close()
		res, err := tc.srv.Client().Get(tc.srv.URL + "/healthz")
		if err != nil {
			t.Fatal(err)
		}
		_ = res.Body.Close()
		if res.StatusCode != http.StatusOK {
			t.Fatalf("%s: status %d", tc.name, res.StatusCode)
		}
		if v := res.Header.Get("Strict-Transport-Security"); v != "" {
			t.Errorf("%s: Strict-Transport-Security %q", tc.name, v)
		}
		if v := res.Header.Get("X-Content-Type-Options"); v != "nosniff" {
			t.Errorf("%s: X-Content-Type-Options %q", tc.name, v)
		}
	}
}
