package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"github.com/mailroom/mailroom/apitest"
	"github.com/mailroom/mailroom/require"
)

// axeScript is where .ci/run installs axe-core, Deque's accessibility
// engine, with npm; MAILROOM_AXE_JS names another copy.
const axeScript = "testdata/axe/node_modules/axe-core/axe.min.js"

// axeOrSkip returns axe-core's script, or skips the test saying how to
// install it (fails it, under MAILROOM_REQUIRE=axe).
func axeOrSkip(t *testing.T) string {
	t.Helper()
	path := os.Getenv("MAILROOM_AXE_JS")
	if path == "" {
		path = axeScript
	}
	src, err := os.ReadFile(path)
	if err != nil {
		require.Missing(t, require.Axe, "axe-core is not installed (%v): `npm install --prefix e2e/testdata/axe axe-core@4.14.1` (from the repository root) installs it, as .ci/run does", err)
	}
	return string(src)
}

type axeViolation struct {
	ID     string `json:"id"`
	Impact string `json:"impact"`
	Help   string `json:"help"`
	Nodes  []struct {
		Target  []any  `json:"target"`
		Summary string `json:"failureSummary"`
	} `json:"nodes"`
}

// audit runs axe-core's WCAG 2.0–2.2 A and AA rules (contrast, names,
// labels, landmarks, focusable content, …) on the page as it stands. The
// preview frame is left out: it shows the sender's mail, not the dashboard.
func (b *browser) audit(axe, page string) {
	b.t.Helper()
	if !evalJS[bool](b, `typeof window.axe === "object"`) {
		// Through the DevTools protocol, which the page's policy does not
		// govern: the dashboard itself never runs code it did not ship.
		evalJS[bool](b, axe+"\n;true")
	}
	raw := evalJS[string](b, `axe.run(document, {iframes: false, resultTypes: ["violations"],
		runOnly: {type: "tag", values: ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa", "wcag22aa"]}})
		.then(r => JSON.stringify(r.violations))`)
	var vs []axeViolation
	if err := json.Unmarshal([]byte(raw), &vs); err != nil {
		b.fatalf("axe's answer on %s: %v: %s", page, err, clip(raw, 500))
	}
	for _, v := range vs {
		var where []string
		for _, n := range v.Nodes {
			where = append(where, fmt.Sprintf("%v: %s", n.Target, n.Summary))
		}
		b.t.Errorf("%s: %s (%s, %s):\n  %s", page, v.Help, v.ID, v.Impact, strings.Join(where, "\n  "))
	}
}

// The dashboard meets WCAG 2.2 AA as axe-core checks it, on every page, at a
// desktop's and a phone's width; and it is usable with the keyboard alone.
func TestDashboardAccessibility(t *testing.T) {
	browserOrSkip(t)
	axe := axeOrSkip(t)
	s := startServer(t, filepath.Join(t.TempDir(), "mailroom-data"), "--dev")
	send := s.client.Do(apitest.Request{Method: "POST", Path: "/v1/send", Key: s.devKey, Body: map[string]any{
		"from": "Shop <orders@mailroom.test>", "to": "ann@example.com", "subject": "Your receipt",
		"html": "<p>Thanks for your order.</p>", "tags": map[string]string{"order": "1042"}}})
	if send.Status != 200 {
		t.Fatalf("send: %d %s", send.Status, send.Body)
	}
	msg := send.Str("messageId")
	for _, r := range []apitest.Request{
		{Method: "POST", Path: "/v1/templates", Body: map[string]any{"name": "welcome", "subject": "Hi {{name}}", "html": "<p>Hello {{name}}</p>"}},
		{Method: "POST", Path: "/v1/suppressions", Body: map[string]any{"address": "gone@example.com"}},
		{Method: "POST", Path: "/v1/webhooks", Body: map[string]any{"url": "https://hooks.example.com/mailroom", "events": []string{"*"}}},
	} {
		r.Key = s.devKey
		if res := s.client.Do(r); res.Status != 201 {
			t.Fatalf("%s %s: %d %s", r.Method, r.Path, res.Status, res.Body)
		}
	}
	hook := s.client.Do(apitest.Request{Method: "GET", Path: "/v1/webhooks", Key: s.devKey})
	var hooks struct {
		Data []struct {
			ID string `json:"id"`
		} `json:"data"`
	}
	if err := json.Unmarshal(hook.Body, &hooks); err != nil || len(hooks.Data) != 1 {
		t.Fatalf("webhooks: %s", hook.Body)
	}

	b := newBrowser(t, s)
	b.navigate("/")
	b.waitVisible("#api-key")
	b.audit(axe, "sign-in")

	// Keyboard alone: the key field has the focus, Enter signs in, the
	// skip link is the first Tab stop of a page and leads past the
	// navigation, and a message opens with Enter.
	if got := evalJS[string](b, `document.activeElement.id`); got != "api-key" {
		b.fatalf("on the sign-in page the focus is on #%s, want #api-key", got)
	}
	b.do("typing the key and Enter", chromedp.KeyEvent(s.devKey), chromedp.KeyEvent(kb.Enter))
	b.waitLoaded("#message-list a.message-link")
	b.navigate("/messages")
	b.waitLoaded("#message-list a.message-link")
	b.do("tabbing to the skip link", chromedp.KeyEvent(kb.Tab))
	if got := evalJS[string](b, `document.activeElement.textContent`); got != "Skip to content" {
		b.fatalf("the first Tab stop is %q, want the skip link", got)
	}
	b.do("following the skip link, then Tab", chromedp.KeyEvent(kb.Enter), chromedp.KeyEvent(kb.Tab))
	if got := evalJS[bool](b, `!!document.activeElement.closest("main") && !document.activeElement.closest("nav")`); !got {
		b.fatalf("after the skip link, Tab goes to %s, not into the page's content", evalJS[string](b, `document.activeElement.outerHTML.slice(0, 200)`))
	}
	b.waitLoaded("#message-list a.message-link")
	b.do("focusing the first message", chromedp.Focus("#message-list a.message-link"), chromedp.KeyEvent(kb.Enter))
	b.waitLoaded("#timeline")
	if got := evalJS[string](b, `location.pathname`); got != "/messages/"+msg {
		b.fatalf("Enter on the message link went to %s", got)
	}
	if got := evalJS[string](b, `document.activeElement.tagName`); got != "H1" {
		b.errorf("after opening a page, focus is on %s, want its heading (so a screen reader announces the page)", got)
	}

	pages := []struct{ path, ready string }{
		{"/messages", "#message-list"},
		{"/messages/" + msg, "#timeline"},
		{"/domains", "a.domain-link"},
		{"/domains/mailroom.test", "#records"},
		{"/templates", "h1"},
		{"/templates/welcome", "h1"},
		{"/webhooks", "h1"},
		{"/webhooks/" + hooks.Data[0].ID, "h1"},
		{"/suppressions", "h1"},
		{"/api-keys", "h1"},
		{"/audit-log", "#audit-entries"},
	}
	for _, width := range []int64{1280, 390} {
		b.setViewport(width, 900, width < 500)
		for _, p := range pages {
			b.navigate(p.path)
			b.waitLoaded(p.ready)
			b.audit(axe, fmt.Sprintf("%s at %d px", p.path, width))
		}
	}
	if problems := b.ConsoleErrors(); len(problems) > 0 {
		t.Errorf("console errors: %v", problems)
	}
}
