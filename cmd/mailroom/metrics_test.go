package main

import (
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
)

// The metrics listener serves metrics and profiles, and nothing that shows
// the command line or the environment: /debug/pprof/cmdline (net/http/pprof)
// and /debug/vars (expvar, which the Prometheus client imports) would both
// show every argument, --secret-key and the passwords of --database-url
// and --relay-url among them.
func TestMetricsListenerShowsNoCommandLine(t *testing.T) {
	srv := httptest.NewServer(metricsHandler(prometheus.NewRegistry()))
	defer srv.Close()
	get := func(path string) (int, string) {
		t.Helper()
		resp, err := http.Get(srv.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, err := io.ReadAll(resp.Body)
		if err != nil {
			t.Fatal(err)
		}
		return resp.StatusCode, string(body)
	}
	for _, path := range []string{"/debug/pprof/cmdline", "/debug/vars", "/debug/pprof/cmdline?debug=1"} {
		code, body := get(path)
		if code != http.StatusNotFound || strings.Contains(body, os.Args[0]) {
			t.Errorf("GET %s: %d, want 404 and no command line:\n%.300s", path, code, body)
		}
	}
	for _, path := range []string{"/metrics", "/debug/pprof/", "/debug/pprof/heap", "/debug/pprof/goroutine?debug=1"} {
		if code, body := get(path); code != http.StatusOK {
			t.Errorf("GET %s: %d, want 200:\n%.300s", path, code, body)
		}
	}
	// The index lists only what is served.
	if _, body := get("/debug/pprof/"); strings.Contains(body, "cmdline") {
		t.Errorf("the pprof index still offers cmdline:\n%s", body)
	}
}
