package e2e

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"

	"github.com/mailroom/mailroom/apitest"
)

// A domain's next check that is overdue is "due now", not "5 seconds ago";
// the --dev sandbox domain, never looked up in DNS, says so.
func TestDashboardDomainTimes(t *testing.T) {
	browserOrSkip(t)
	s := startServer(t, filepath.Join(t.TempDir(), "mailroom-data"), "--dev")
	if r := s.client.Do(apitest.Request{Method: "POST", Path: "/v1/domains", Key: s.devKey, Body: map[string]any{"name": "example.org"}}); r.Status != 201 {
		t.Fatalf("adding a domain: %d %s", r.Status, r.Body)
	}
	b := newBrowser(t, s)
	b.navigate("/")
	b.signIn(s.devKey)
	b.waitLoaded(mainNav)

	b.step("the sandbox domain")
	b.navigate("/domains/mailroom.test")
	b.waitLoaded("#records")
	if got := b.cfgFact("Last checked"); !strings.Contains(got, "Sandbox domain") {
		b.errorf("the sandbox domain's Last checked says %q, want that it is not checked in DNS", got)
	}

	b.step("a pending domain's next check, ahead")
	b.navigate("/domains/example.org")
	b.waitLoaded("#records")
	if got := b.cfgFact("Next check"); !strings.HasPrefix(got, "in ") {
		b.errorf("a new domain's Next check says %q, want in a minute or so", got)
	}

	b.step("a pending domain's next check, overdue")
	// The page's clock runs ten minutes ahead: the check, a minute after
	// the domain was added, is late.
	ctx, cancel := context.WithTimeout(b.ctx, waitTimeout)
	defer cancel()
	if _, err := chromedp.Call(ctx, page.AddScriptToEvaluateOnNewDocument, page.AddScriptToEvaluateOnNewDocumentParams{
		Source: `(() => { const now = Date.now; Date.now = () => now() + 10 * 60 * 1000; })()`}); err != nil {
		b.fatalf("moving the page's clock: %v", err)
	}
	b.navigate("/domains/example.org")
	b.waitLoaded("#records")
	if got := b.cfgFact("Next check"); got != "due now" {
		b.errorf("an overdue Next check says %q, want due now", got)
	}
	b.screenshot("domain-check-due")
	if errs := b.ConsoleErrors(); len(errs) > 0 {
		t.Errorf("the domain pages logged %d console errors or exceptions:\n  %s", len(errs), strings.TrimSpace(strings.ReplaceAll(fmtEntries(errs), "\n", "\n  ")))
	}
}
