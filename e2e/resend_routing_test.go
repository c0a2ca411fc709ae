package e2e

import (
	"crypto/tls"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/mailroom/mailroom/storetest"
)

// Resend's routes and the dashboard share the listener's root (issue 30,
// item 6): a browser's navigation to /domains and /domains/<name> (no
// Authorization) keeps getting the dashboard, while the same paths with a
// key, as an SDK asks, are the API's, with a doubled slash too.
func TestResendRoutesLeaveTheDashboard(t *testing.T) {
	e := startResendEnv(t, storetest.SQLite)
	hc := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: e.node.roots()}}}
	get := func(path string, header map[string]string) (int, http.Header, string) {
		t.Helper()
		req, err := http.NewRequest("GET", e.node.base+path, nil)
		if err != nil {
			t.Fatal(err)
		}
		for k, v := range header {
			req.Header.Set(k, v)
		}
		resp, err := hc.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, resp.Header, string(body)
	}

	// What a browser's navigation sends: Accept for a document, no
	// Authorization. And what curl sends: neither.
	browser := map[string]string{"Accept": "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8",
		"Sec-Fetch-Mode": "navigate", "Sec-Fetch-Dest": "document"}
	for _, path := range []string{"/domains", "/domains/shop.example", "/api-keys", "/webhooks"} {
		for who, h := range map[string]map[string]string{"a browser": browser, "curl": nil} {
			status, header, body := get(path, h)
			if status != 200 || !strings.HasPrefix(header.Get("Content-Type"), "text/html") ||
				header.Get("Content-Security-Policy") == "" || !strings.Contains(body, "<html") {
				t.Errorf("%s GET %s: %d %s %q, want the dashboard's page", who, path, status, header.Get("Content-Type"), clip(body, 200))
			}
		}
	}

	// With a key, as Resend's SDKs ask (Node's sends no Accept, and
	// makes //domains from a base URL ending in "/"): the API's JSON.
	for _, path := range []string{"/domains", "//domains", "/domains/shop.example", "//domains/shop.example"} {
		for who, h := range map[string]map[string]string{
			"the Go SDK":   {"Authorization": "Bearer " + e.key, "Accept": "application/json", "Content-Type": "application/json"},
			"the Node SDK": {"Authorization": "Bearer " + e.key, "Content-Type": "application/json"},
		} {
			status, header, body := get(path, h)
			var v map[string]any
			if !strings.HasPrefix(header.Get("Content-Type"), "application/json") || json.Unmarshal([]byte(body), &v) != nil {
				t.Errorf("%s GET %s: %d %s %q, want the API's JSON", who, path, status, header.Get("Content-Type"), clip(body, 200))
				continue
			}
			wantObject := "list"
			if strings.HasSuffix(path, "shop.example") {
				wantObject = "domain"
			}
			if status != 200 || v["object"] != wantObject {
				t.Errorf("%s GET %s: %d %s, want 200 with object %s", who, path, status, clip(body, 300), wantObject)
			}
		}
	}
	// Without a key, a request the dashboard would refuse is the API's:
	// Resend's missing_api_key.
	req, _ := http.NewRequest("POST", e.node.base+"/emails", strings.NewReader(`{}`))
	req.Header.Set("Content-Type", "application/json")
	resp, err := hc.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	var eb struct {
		StatusCode int    `json:"statusCode"`
		Name       string `json:"name"`
	}
	if resp.StatusCode != 401 || json.Unmarshal(body, &eb) != nil || eb.Name != "missing_api_key" || eb.StatusCode != 401 {
		t.Errorf("POST /emails without a key: %d %s, want 401 missing_api_key", resp.StatusCode, body)
	}

	// And in a real browser, signed in: the dashboard's domain pages.
	browserOrSkip(t)
	b := newBrowser(t, e.node)
	b.navigate("/domains")
	b.signIn(e.key)
	b.waitFor("the domains page lists shop.example", `location.pathname === "/domains" && document.querySelector('a.domain-link[href="/domains/shop.example"]') !== null`)
	b.navigate("/domains/shop.example")
	b.waitLoaded("#records")
	b.waitFor("the domain's page", `document.querySelector("h1")?.textContent === "shop.example"`)
}
