package dashboard

import (
	"io"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"

	mhttp "github.com/mailroom/mailroom/http"
)

// serveAPI runs the API's handler with the dashboard over real TLS, as serve
// wires it.
func serveAPI(t *testing.T) *httptest.Server {
	t.Helper()
	srv := httptest.NewTLSServer((&mhttp.Server{Dashboard: New()}).Handler())
	t.Cleanup(srv.Close)
	return srv
}

func get(t *testing.T, srv *httptest.Server, method, path string, header map[string]string) (*http.Response, string) {
	t.Helper()
	req, _ := http.NewRequest(method, srv.URL+path, nil)
	for k, v := range header {
		req.Header.Set(k, v)
	}
	res, err := srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	body, _ := io.ReadAll(res.Body)
	return res, string(body)
}

func TestPagesAndAssetsAreServedUnderAStrictPolicy(t *testing.T) {
	srv := serveAPI(t)
	for _, tc := range []struct {
		path, contentType string
		status            int
	}{
		{"/", "text/html; charset=utf-8", 200},
		{"/messages", "text/html; charset=utf-8", 200},
		{"/messages/msg_01JD0000000000000000000000", "text/html; charset=utf-8", 200},
		{"/domains/mailroom.test", "text/html; charset=utf-8", 200},
		{"/api-keys", "text/html; charset=utf-8", 200},
		{"/audit-log", "text/html; charset=utf-8", 200},
		{"/no-such-page", "text/html; charset=utf-8", 404},
		{"/assets/app.js", "text/javascript; charset=utf-8", 200},
		{"/assets/app.css", "text/css; charset=utf-8", 200},
		{"/assets/icon.svg", "image/svg+xml", 200},
	} {
		res, body := get(t, srv, "GET", tc.path, nil)
		if res.StatusCode != tc.status || res.Header.Get("Content-Type") != tc.contentType {
			t.Errorf("GET %s: %d %q, want %d %q", tc.path, res.StatusCode, res.Header.Get("Content-Type"), tc.status, tc.contentType)
		}
		csp := res.Header.Get("Content-Security-Policy")
		for _, want := range []string{"default-src 'none'", "script-src 'self';", "frame-ancestors 'none'", "connect-src 'self'"} {
			if !strings.Contains(csp, want) {
				t.Errorf("GET %s: the policy %q lacks %q", tc.path, csp, want)
			}
		}
		if res.Header.Get("X-Frame-Options") != "DENY" || res.Header.Get("X-Content-Type-Options") != "nosniff" || res.Header.Get("Referrer-Policy") != "no-referrer" {
			t.Errorf("GET %s: security headers %v", tc.path, res.Header)
		}
		if res.Header.Get("Set-Cookie") != "" {
			t.Errorf("GET %s sets a cookie", tc.path)
		}
		if strings.HasSuffix(tc.contentType, "html; charset=utf-8") && !strings.Contains(body, `<script type="module" src="/assets/app.js"></script>`) {
			t.Errorf("GET %s: not the dashboard's shell:\n%s", tc.path, body)
		}
	}
}

func TestAssetsRevalidate(t *testing.T) {
	srv := serveAPI(t)
	res, _ := get(t, srv, "GET", "/assets/app.js", nil)
	etag := res.Header.Get("ETag")
	if etag == "" || res.Header.Get("Cache-Control") != "no-cache" {
		t.Fatalf("ETag %q, Cache-Control %q", etag, res.Header.Get("Cache-Control"))
	}
	if res, body := get(t, srv, "GET", "/assets/app.js", map[string]string{"If-None-Match": etag}); res.StatusCode != 304 || body != "" {
		t.Fatalf("a current copy: %d with %d bytes", res.StatusCode, len(body))
	}
	if res, _ := get(t, srv, "GET", "/assets/app.js", map[string]string{"If-None-Match": `"old"`}); res.StatusCode != 200 {
		t.Fatalf("an old copy: %d", res.StatusCode)
	}
	if res, body := get(t, srv, "HEAD", "/", nil); res.StatusCode != 200 || body != "" {
		t.Fatalf("HEAD /: %d with %d bytes", res.StatusCode, len(body))
	}
}

// The API keeps its JSON answers: the dashboard takes only GET and HEAD
// outside /v1 (docs/api.md "Moving from Resend": any other method outside
// /v1 is for Resend's routes, which answer in Resend's shape).
func TestTheAPIStaysJSON(t *testing.T) {
	srv := serveAPI(t)
	for _, tc := range []struct {
		method, path string
		status       int
		code         string
	}{
		{"GET", "/v1/no-such-route", 404, `"error":"not_found"`},
		{"GET", "/v1", 404, `"error":"not_found"`},
		{"GET", "//v1/messages", 404, `"error":"not_found"`},
		{"POST", "/", 404, `"name":"not_found"`},
		{"DELETE", "/messages", 404, `"name":"not_found"`},
		{"DELETE", "/domains", 405, `"name":"method_not_allowed"`},
	} {
		res, body := get(t, srv, tc.method, tc.path, nil)
		if res.StatusCode != tc.status || !strings.Contains(body, tc.code) || !strings.HasPrefix(res.Header.Get("Content-Type"), "application/json") {
			t.Errorf("%s %s: %d %s %s", tc.method, tc.path, res.StatusCode, res.Header.Get("Content-Type"), body)
		}
	}
	if res, _ := get(t, srv, "DELETE", "/domains", nil); res.Header.Get("Allow") != "GET, HEAD, POST" {
		t.Errorf("DELETE /domains Allow: %q", res.Header.Get("Allow"))
	}
	// Without a dashboard, / is the API's JSON 404 as before.
	bare := httptest.NewTLSServer((&mhttp.Server{}).Handler())
	defer bare.Close()
	if res, body := get(t, bare, "GET", "/", nil); res.StatusCode != 404 || !strings.Contains(body, `"not_found"`) {
		t.Errorf("GET / without a dashboard: %d %s", res.StatusCode, body)
	}
}

// The rules that keep the dashboard safe and offline hold in every file:
// nothing writes a string into the page as HTML or runs one as code (so
// text from the API can only ever show as text; a message's own html goes
// only into the sandboxed preview frame's srcdoc), no script is inline (the
// policy would block it), and nothing is loaded from another origin.
func TestEmbeddedFilesKeepTheRules(t *testing.T) {
	forbidden := map[string]*regexp.Regexp{
		".js":   regexp.MustCompile(`\.(?:inner|outer)HTML\s*\+?=|insertAdjacentHTML|document\.write|\beval\(|new Function|setAttribute\(\s*['"]on|createContextualFragment|\.html\(`),
		".html": regexp.MustCompile(`<script(?:\s+(?:type="module"))?\s*>|\son[a-z]+\s*=|style\s*=`),
		".css":  regexp.MustCompile(`url\(\s*['"]?(?:https?:)?//|@import\s+url\(\s*['"]?(?:https?:)?//`),
	}
	remote := regexp.MustCompile(`(?:src|href)\s*=\s*["'](?:https?:)?//|import\s*\(?\s*["'](?:https?:)?//|from\s+["'](?:https?:)?//|fetch\(\s*["'](?:https?:)?//`)
	n := 0
	err := fs.WalkDir(static, "static", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		body, err := fs.ReadFile(static, p)
		if err != nil {
			return err
		}
		n++
		for ext, re := range forbidden {
			if strings.HasSuffix(p, ext) {
				if m := re.Find(body); m != nil {
					t.Errorf("%s: %q breaks the dashboard's rules", p, m)
				}
			}
		}
		if m := remote.Find(body); m != nil {
			t.Errorf("%s: %q loads from another origin", p, m)
		}
		return nil
	})
	if err != nil || n < 5 {
		t.Fatalf("walked %d files: %v", n, err)
	}
}
