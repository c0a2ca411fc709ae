package e2e

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/mailroom/mailroom/apitest"
)

// The domain page of a receiving domain says receiving is on and shows the
// MX to publish as needed to receive (not to send), with the MX host; once
// published and verified it reads verified.
func TestDashboardReceivingDomainRecord(t *testing.T) {
	browserOrSkip(t)
	w := newWorld(t)
	work := t.TempDir()
	dataDir := filepath.Join(work, "data")
	key := printedKey.FindString(cli(t, work, nil, "accounts", "create", "acme", "--data-dir", dataDir))
	s := startServer(t, dataDir, w.flags()...)
	w.verifyDomain(t, s.client, key, "shop.example")
	domainOf(t, s.client.Do(apitest.Request{Method: "PATCH", Path: "/v1/domains/shop.example", Key: key, Body: map[string]any{"receiving": true}}))

	b := newBrowser(t, s)
	b.navigate("/")
	b.signIn(key)
	b.waitLoaded(mainNav)

	b.step("receiving on, its MX not published")
	b.navigate("/domains/shop.example")
	b.waitLoaded("#records")
	if got := b.text("#domain-receiving"); !strings.HasPrefix(got, "On") {
		b.errorf("the receiving setting reads %q", got)
	}
	got := strings.ToLower(b.text(`li[data-purpose="receiving"]`))
	for _, want := range []string{"receiving mx", "required to receive", "shop.example", "mail.operator.test", "10"} {
		if !strings.Contains(got, want) {
			b.errorf("the receiving MX record reads %q, without %q", got, want)
		}
	}

	b.step("published and verified")
	w.dns.SetMX("shop.example", 10, "mail.operator.test")
	domainOf(t, s.client.Do(apitest.Request{Method: "POST", Path: "/v1/domains/shop.example/verify", Key: key}))
	b.navigate("/domains/shop.example")
	b.waitLoaded("#records")
	if n := b.count(`li[data-purpose="receiving"].record-verified`); n != 1 {
		b.errorf("%d verified receiving records, want 1: %q", n, b.text(`li[data-purpose="receiving"]`))
	}
	b.screenshot("domain-receiving")
	if errs := b.ConsoleErrors(); len(errs) > 0 {
		t.Errorf("the domain page logged %d console errors or exceptions:\n  %s", len(errs), strings.TrimSpace(strings.ReplaceAll(fmtEntries(errs), "\n", "\n  ")))
	}
}
