package e2e

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/mailroom/mailroom/apitest"
)

// The domain page tells a rotation's records apart: the next key while it
// waits for its record, the Ed25519 key, and after the move the old key's
// record with the date from which it may be deleted.
func TestDashboardDKIMRotationRecords(t *testing.T) {
	browserOrSkip(t)
	w := newWorld(t)
	work := t.TempDir()
	dataDir := filepath.Join(work, "data")
	key := printedKey.FindString(cli(t, work, nil, "accounts", "create", "acme", "--data-dir", dataDir))
	s := startServer(t, dataDir, w.flags()...)
	w.verifyDomain(t, s.client, key, "shop.example")
	c := s.client
	pending := dkimRecords(domainOf(t, c.Do(apitest.Request{Method: "POST", Path: "/v1/domains/shop.example/dkim/rotate", Key: key})))[1]
	domainOf(t, c.Do(apitest.Request{Method: "PATCH", Path: "/v1/domains/shop.example", Key: key, Body: map[string]any{"dkimEd25519": true}}))

	b := newBrowser(t, s)
	b.navigate("/")
	b.signIn(key)
	b.waitLoaded(mainNav)

	b.step("a rotation waiting for its record")
	b.navigate("/domains/shop.example")
	b.waitLoaded("#records")
	if got := b.text(`li[data-role="next"]`); !strings.Contains(got, "DKIM, next key") || !strings.Contains(strings.ToLower(got), "key rotation") || !strings.Contains(got, pending.Name) {
		b.errorf("the next key's record reads %q", got)
	}
	if got := b.text(`li[data-role="ed25519"]`); !strings.Contains(got, "DKIM, Ed25519") || !strings.Contains(strings.ToLower(got), "optional") {
		b.errorf("the Ed25519 record reads %q", got)
	}
	if n := b.count(`li[data-role="old"]`); n != 0 {
		b.errorf("%d old-key records before the move", n)
	}

	b.step("after the move")
	w.dns.SetTXT(pending.Name, pending.Value)
	domainOf(t, c.Do(apitest.Request{Method: "POST", Path: "/v1/domains/shop.example/verify", Key: key}))
	b.navigate("/domains/shop.example")
	b.waitLoaded("#records")
	if got := b.text(`li[data-role="old"]`); !strings.Contains(got, "DKIM, old key") || !strings.Contains(got, "Removable after") {
		b.errorf("the old key's record reads %q", got)
	}
	if n := b.count(`li[data-role="next"]`); n != 0 {
		b.errorf("%d next-key records after the move", n)
	}
	b.screenshot("domain-dkim-rotated")
	if errs := b.ConsoleErrors(); len(errs) > 0 {
		t.Errorf("the domain page logged %d console errors or exceptions:\n  %s", len(errs), strings.TrimSpace(strings.ReplaceAll(fmtEntries(errs), "\n", "\n  ")))
	}
}
