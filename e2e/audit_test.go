package e2e

import (
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/mailroom/mailroom"
	"github.com/mailroom/mailroom/apitest"
	"github.com/mailroom/mailroom/client/api"
	"github.com/mailroom/mailroom/storetest"
)

var accountID = regexp.MustCompile(`acct_[0-9a-z]{26}`)

// What the operator's commands and an account's API keys change, while the
// service runs, is in GET /v1/audit-log: the CLI's as the CLI's, the API's
// with the key, the request id and the address, and neither key's secret.
func TestAuditLogOfTheCLIAndTheAPI(t *testing.T) {
	storetest.Each(t, func(t *testing.T, eng storetest.Engine) {
		work := t.TempDir()
		dataDir := filepath.Join(work, "data")
		storage := append([]string{"--data-dir", dataDir}, eng.Storage(t)...)
		s := startServer(t, dataDir, storage...)

		out := cli(t, work, nil, append([]string{"accounts", "create", "acme"}, storage...)...)
		admin, acctID := printedKey.FindString(out), accountID.FindString(out)
		adminID, _, _ := mailroom.ParseAPIKey(admin)
		r := s.client.Do(apitest.Request{Method: "POST", Path: "/v1/api-keys", Key: admin,
			Header: map[string]string{"X-Request-Id": "req-e2e-audit"},
			Body:   map[string]any{"name": "billing", "scopes": []string{"send"}}})
		if r.Status != 201 {
			t.Fatalf("create key: %d %s", r.Status, r.Body)
		}
		made := apitest.Decode[api.APIKeyCreated](r)
		cli(t, work, nil, append([]string{"keys", "revoke", "--account", "acme", made.KeyID}, storage...)...)

		r = s.client.Do(apitest.Request{Method: "GET", Path: "/v1/audit-log", Key: admin})
		if r.Status != 200 {
			t.Fatalf("audit log: %d %s", r.Status, r.Body)
		}
		for _, secret := range []string{admin, made.Key, strings.Split(made.Key, "_")[2]} {
			if strings.Contains(string(r.Body), secret) {
				t.Fatalf("the audit log holds a key's secret: %s", r.Body)
			}
		}
		var got []string
		for _, e := range apitest.Decode[api.List[api.AuditEntry]](r).Data {
			who := string(e.Actor.Type)
			if e.Actor.KeyID != "" {
				who += ":" + e.Actor.KeyID
			}
			if e.RequestID != nil {
				who += " " + *e.RequestID + " from " + *e.IP
			}
			got = append(got, string(e.Action)+" on "+e.Target.ID+" by "+who)
		}
		want := []string{
			"api_key.revoked on " + made.KeyID + " by cli",
			"api_key.created on " + made.KeyID + " by api_key:" + adminID + " req-e2e-audit from 127.0.0.1",
			"api_key.created on " + adminID + " by cli",
			"account.created on " + acctID + " by cli",
		}
		if strings.Join(got, "\n") != strings.Join(want, "\n") {
			t.Fatalf("audit log:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
		}
	})
}

// The dashboard's Audit log page lists the account's changes with who made
// them and what changed, shows what the API returns as text only, and
// filters by action and by key through the address bar.
func TestDashboardAuditLog(t *testing.T) {
	browserOrSkip(t)
	s := startServer(t, filepath.Join(t.TempDir(), "mailroom-data"), "--dev")
	devID, _, _ := mailroom.ParseAPIKey(s.devKey)
	hostile := `<img src=x onerror=alert(1)>`
	r := s.client.Do(apitest.Request{Method: "POST", Path: "/v1/api-keys", Key: s.devKey,
		Header: map[string]string{"X-Request-Id": "req-dashboard-audit"},
		Body:   map[string]any{"name": hostile, "scopes": []string{"send"}}})
	if r.Status != 201 {
		t.Fatalf("create key: %d %s", r.Status, r.Body)
	}
	made := apitest.Decode[api.APIKeyCreated](r)
	if r := s.client.Do(apitest.Request{Method: "DELETE", Path: "/v1/api-keys/" + made.KeyID, Key: s.devKey}); r.Status != 200 {
		t.Fatalf("revoke: %d %s", r.Status, r.Body)
	}

	b := newBrowser(t, s)
	b.navigate("/")
	b.signIn(s.devKey)
	b.checkNav([]string{"/audit-log"}, nil)
	b.step("the audit log")
	b.clickAndWait(`nav[aria-label="Main"] a[href="/audit-log"]`, "/audit-log", "#audit-entries")
	b.screenshot("audit-log")
	if got := b.text("h1"); got != "Audit log" {
		b.errorf("the page's heading is %q", got)
	}
	first := evalJS[string](b, `document.querySelector("#audit-entries tbody tr").dataset.action`)
	if first != "api_key.revoked" {
		b.errorf("the newest entry is %s, want api_key.revoked", first)
	}
	created := `#audit-entries tbody tr[data-action="api_key.created"]`
	row := b.text(created)
	for _, want := range []string{devID, "127.0.0.1", "req-dashboard-audit", hostile, "send"} {
		if !strings.Contains(row, want) {
			b.errorf("the api_key.created row does not show %q: %s", want, row)
		}
	}
	if n := b.count("#audit-entries img"); n != 0 {
		b.errorf("a name from the API became %d image elements", n)
	}

	b.step("filtering by action")
	b.do("choosing api_key.revoked", chromedp.SetValue(chromedp.CSS(`select[name="action"]`), "api_key.revoked"),
		chromedp.Click(chromedp.CSS(`form[role="search"] button[type="submit"]`)))
	b.waitFor("the filtered list", `location.search.includes("action=api_key.revoked") && document.querySelector('main[aria-busy="false"]')
		&& [...document.querySelectorAll("#audit-entries tbody tr")].every((r) => r.dataset.action === "api_key.revoked")
		&& document.querySelectorAll("#audit-entries tbody tr").length === 1`)

	b.step("the changes of one key")
	b.clickAndWait(`#audit-entries a.audit-key`, "/audit-log", "#audit-entries")
	if got := evalJS[string](b, `new URLSearchParams(location.search).get("keyId")`); got != devID {
		b.errorf("the key's link filters by %q, want %q", got, devID)
	}
	if got := b.count("#audit-entries tbody tr"); got != 2 {
		b.errorf("the dev key's changes: %d rows, want 2 (the key it created and revoked)", got)
	}

	b.step("on a phone")
	b.setViewport(390, 844, true)
	b.navigate("/audit-log")
	b.waitLoaded("#audit-entries")
	if why := b.sideways(390); why != "" {
		b.errorf("the audit log scrolls sideways at 390 pixels: %s", why)
	}
	b.screenshot("audit-log-phone")
	if problems := b.ConsoleErrors(); len(problems) > 0 {
		t.Errorf("console errors: %v", problems)
	}
}
