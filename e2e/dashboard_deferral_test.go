package e2e

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/mailroom/mailroom/apitest"
	"github.com/mailroom/mailroom/poll"
	"github.com/mailroom/mailroom/storetest"
)

// A message whose recipient the receiver greylists, in a real browser: its
// recipient shows why it waits (greylisted), until when (its next attempt)
// and the site its attempt went to, as the API has them; a recipient
// delivered at once shows no deferral. The domain's page shows the IP pool
// the operator assigned from the command line.
func TestDashboardShowsDeferralSiteAndPool(t *testing.T) {
	browserOrSkip(t)
	w := newWorld(t)
	w.mx.Reply("ann@example.net", 451, "4.7.1", "Greylisted, please try again later")
	node, key, _ := w.startAcmeNode(t, storetest.SQLite)
	r := node.client.Do(apitest.Request{Method: "POST", Path: "/v1/send", Key: key, Body: map[string]any{
		"from": "orders@shop.example", "to": []string{"ann@example.net", "bob@example.net"}, "subject": "Your receipt", "text": "Thanks."}})
	if r.Status != 200 {
		t.Fatalf("send: %d %s", r.Status, r.Body)
	}
	id := r.Str("messageId")
	var ann, bob map[string]any
	if !poll.Within(20*time.Second, func() bool {
		m := node.client.Do(apitest.Request{Method: "GET", Path: "/v1/messages/" + id, Key: key}).Map()
		rs, _ := m["recipients"].([]any)
		if len(rs) != 2 {
			return false
		}
		ann, bob = rs[0].(map[string]any), rs[1].(map[string]any)
		return ann["lastDeferralReason"] == "greylisted" && bob["status"] == "delivered"
	}) {
		t.Fatalf("ann was not deferred as greylisted and bob delivered: %v %v", ann, bob)
	}

	b := newBrowser(t, node)
	b.navigate("/")
	b.signIn(key)
	b.waitLoaded(mainNav)

	b.step("the greylisted recipient")
	b.navigate("/messages/" + id)
	b.waitLoaded("#recipients")
	cell := func(n int, label string) string {
		return fmt.Sprintf(`#recipients tbody tr:nth-child(%d) td[data-label="%s"]`, n, label)
	}
	if got := b.text(cell(1, "Status") + " .deferral-reason"); strings.TrimSpace(got) != "greylisted" {
		b.errorf("ann's status says why %q, want greylisted", got)
	}
	if n := b.count(cell(1, "When") + ` time`); n < 2 {
		b.errorf("ann's When shows %d times, want her last attempt and her next: %s", n, b.text(cell(1, "When")))
	}
	if got := b.text(cell(1, "When")); !strings.Contains(got, "next attempt") {
		b.errorf("ann's When says %q, want her next attempt", got)
	}
	site, _ := ann["site"].(string)
	if site == "" {
		site = "—"
	}
	if got := strings.TrimSpace(b.text(cell(1, "Site"))); got != site {
		b.errorf("ann's Site says %q, the API %q", got, site)
	}
	if n := b.count(cell(2, "Status") + " .deferral-reason"); n != 0 {
		b.errorf("bob, never deferred, shows a deferral reason: %s", b.text(cell(2, "Status")))
	}
	// Each recipient's TLS is the API's: version and cipher, verified or
	// not and the policy; none in clear text; a dash before any session.
	for n, rcpt := range []map[string]any{ann, bob} {
		got := strings.Join(strings.Fields(b.text(cell(n+1, "TLS"))), " ")
		want := "—"
		if tls, ok := rcpt["tls"].(map[string]any); ok {
			verified := "not verified"
			if tls["verified"] == true {
				verified = "verified"
			}
			want = fmt.Sprintf("%s %s %s", tls["version"], tls["cipher"], verified)
		} else if rcpt["unencrypted"] == true {
			want = "none (plaintext)"
		}
		if !strings.HasPrefix(got, want) {
			b.errorf("%s's TLS says %q, the API %v (unencrypted %v)", rcpt["address"], got, rcpt["tls"], rcpt["unencrypted"])
		}
	}
	if got := b.text("#timeline"); !strings.Contains(got, "Why: greylisted") {
		b.errorf("the timeline does not say why ann was deferred:\n%s", got)
	}
	b.screenshot("deferred-recipient")

	b.step("the domain's IP pool")
	b.navigate("/domains/shop.example")
	b.waitLoaded("#ip-pool")
	if got := strings.TrimSpace(b.text("#ip-pool")); got != "Default" {
		b.errorf("a domain with no pool shows %q, want Default", got)
	}
	cli(t, t.TempDir(), nil, "domains", "update", "shop.example", "--account", "acme", "--ip-pool", "bulk", "--data-dir", node.dataDir)
	b.navigate("/domains/shop.example")
	b.waitFor("the pool bulk on the domain's page", `document.querySelector("code#ip-pool")?.textContent === "bulk"`)

	b.step("the domain's tls")
	if got := b.text("#domain-tls"); !strings.HasPrefix(got, "Opportunistic") {
		b.errorf("a new domain's TLS says %q, want Opportunistic", got)
	}
	if r := node.client.Do(apitest.Request{Method: "PATCH", Path: "/v1/domains/shop.example", Key: key, Body: map[string]any{"tls": "enforced"}}); r.Status != 200 {
		t.Fatalf("PATCH tls: %d %s", r.Status, r.Body)
	}
	b.navigate("/domains/shop.example")
	b.waitFor("tls enforced on the domain's page", `document.querySelector("#domain-tls")?.dataset.tls === "enforced"`)
	if got := b.text("#domain-tls"); !strings.HasPrefix(got, "Enforced") {
		b.errorf("an enforced domain's TLS says %q", got)
	}
	b.screenshot("domain-ip-pool")
}
