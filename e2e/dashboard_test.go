package e2e

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/input"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"

	"github.com/mailroom/mailroom/apitest"
	"github.com/mailroom/mailroom/poll"
)

// mainNav is the dashboard's main navigation (docs/api.md "Dashboard").
const mainNav = `nav[aria-label="Main"]`

// The dashboard in a real browser, as someone who just ran `serve --dev`
// meets it: sign in with the printed key, find a message sent through the
// API, read its timeline, look at the domain's records and every page, on
// a desktop and on a phone, then sign out; a send-only key sees only what
// it may use. Throughout, the key never leaves sessionStorage (no cookie,
// no URL), the page asks nothing of any other origin and logs no error.
func TestDashboard(t *testing.T) {
	browserOrSkip(t)
	s := startServer(t, filepath.Join(t.TempDir(), "mailroom-data"), "--dev")

	// A message to find in the log. Its subject is markup, which must show
	// as text and never become an element.
	subject := `Receipt <img src=x onerror=alert(1)> #1042`
	r := s.client.Do(apitest.Request{Method: "POST", Path: "/v1/send", Key: s.devKey, Body: map[string]any{
		"from": "Shop <orders@mailroom.test>", "to": "ann@example.com", "subject": subject,
		"html": "<p>Hello <b>there</b></p>"}})
	if r.Status != 200 {
		t.Fatalf("send: %d %s", r.Status, r.Body)
	}
	id := r.Str("messageId")
	var msg map[string]any
	if !poll.Within(20*time.Second, func() bool {
		msg = s.client.Do(apitest.Request{Method: "GET", Path: "/v1/messages/" + id, Key: s.devKey}).Map()
		return msg["status"] == "delivered"
	}) {
		t.Fatalf("the message was not captured: %v", msg)
	}
	var eventTypes []string // the timeline, as the API has it
	events, _ := msg["events"].([]any)
	for _, e := range events {
		if typ, _ := e.(map[string]any)["type"].(string); typ != "" && !slices.Contains(eventTypes, typ) {
			eventTypes = append(eventTypes, typ)
		}
	}
	if !slices.Contains(eventTypes, "email.delivered") {
		t.Fatalf("the API's timeline lacks email.delivered: %v", eventTypes)
	}

	// A key with only the send scope.
	r = s.client.Do(apitest.Request{Method: "POST", Path: "/v1/api-keys", Key: s.devKey, Body: map[string]any{
		"name": "dashboard send only", "scopes": []string{"send"}}})
	sendKey := r.Str("key")
	if r.Status != 201 || sendKey == "" {
		t.Fatalf("creating a send-only key: %d %s", r.Status, r.Body)
	}

	b := newBrowser(t, s)

	b.step("the sign-in form")
	b.navigate("/")
	b.waitVisible(`form#sign-in input#api-key`)
	if typ := evalJS[string](b, `document.querySelector("#api-key").type`); typ != "password" {
		b.errorf(`input#api-key has type %q, want "password"`, typ)
	}
	b.waitVisible(signInSubmit)
	b.screenshot("sign-in")

	b.step("a wrong key is refused")
	wrongKey := "mailroom_aaaaaaaaaaaaaaaa_" + strings.Repeat("a", 43)
	// Chromium logs the API's 401 for the refused key as an error; that
	// one is the point of this step.
	done := b.expectErrors("the API refuses the wrong key", func(e consoleEntry) bool {
		return e.kind == "log:network" && strings.Contains(e.text, "status of 401") && strings.Contains(e.text, s.base+"/v1/")
	})
	b.signIn(wrongKey)
	b.waitFor("a message in #sign-in-error", `(document.querySelector("#sign-in-error")?.textContent ?? "").trim() !== ""`)
	b.waitVisible(`#sign-in-error`)
	done()
	errText := strings.TrimSpace(b.text(`#sign-in-error`))
	if role := evalJS[*string](b, `document.querySelector("#sign-in-error").getAttribute("role")`); role == nil || *role != "alert" {
		b.errorf("#sign-in-error has role %v, want alert", deref(role))
	}
	if !strings.Contains(strings.ToLower(errText), "valid") {
		b.errorf("a wrong key: #sign-in-error says %q, want that the key is not valid", errText)
	}
	if stored := b.storedKey(); stored != nil {
		b.errorf("a refused key was kept in sessionStorage: %q", *stored)
	}
	b.screenshot("wrong-key")

	b.step("sign in with the dev key: the email log")
	b.signIn(s.devKey)
	link := `#message-list a.message-link[href$="/messages/` + id + `"]`
	b.waitLoaded(link)
	if stored := b.storedKey(); stored == nil || *stored != s.devKey {
		b.errorf("sessionStorage %q holds %v, want the key that signed in", "mailroom.apiKey", deref(stored))
	}
	b.checkNav([]string{"/messages", "/domains", "/templates", "/webhooks", "/suppressions", "/api-keys"}, nil)
	b.screenshot("email-log")

	b.step("the subject is text, not markup")
	if got := b.textContent(link); strings.TrimSpace(got) != subject {
		b.errorf("the message link's textContent is %q, want the subject %q", got, subject)
	}
	if n := b.count(`#message-list img`); n != 0 {
		html := evalJS[string](b, `document.querySelector("#message-list").innerHTML`)
		b.errorf("#message-list holds %d img elements: the subject became markup\n%s", n, clip(html, 2000))
	}
	b.noDialog()

	b.step("the message: recipient and timeline")
	b.clickAndWait(link, "/messages/"+id, "#timeline")
	if h1 := strings.TrimSpace(b.textContent("h1")); h1 != subject {
		b.errorf("the message page's h1 is %q, want the subject %q", h1, subject)
	}
	b.waitVisible("#recipients")
	recipients := b.text("#recipients")
	for _, want := range []string{"ann@example.com", "delivered"} {
		if !strings.Contains(recipients, want) {
			b.errorf("#recipients lacks %q: %q", want, recipients)
		}
	}
	timeline := b.text("#timeline")
	for _, typ := range eventTypes {
		if !strings.Contains(timeline, typ) {
			b.errorf("#timeline lacks the event %s (the API's timeline: %v): %q", typ, eventTypes, timeline)
		}
	}
	if n := b.count("iframe#html-preview"); n != 1 {
		b.errorf("%d iframe#html-preview elements, want 1", n)
	} else if sandbox := evalJS[*string](b, `document.querySelector("iframe#html-preview").getAttribute("sandbox")`); sandbox == nil {
		b.errorf("iframe#html-preview is not sandboxed")
	} else if strings.Contains(*sandbox, "allow-scripts") {
		b.errorf(`iframe#html-preview has sandbox=%q: mail's scripts may run`, *sandbox)
	}
	if got := b.frameText("iframe#html-preview"); !strings.Contains(got, "Hello there") {
		b.errorf("the html preview shows %q, want the message's html (Hello there)", got)
	}
	for _, sel := range []string{"#text-part", "#raw-source"} {
		if b.count(sel) == 0 {
			b.errorf("the message page has no %s", sel)
		}
	}
	b.noDialog()
	b.screenshot("message")

	b.step("domains: the sandbox domain's DKIM record")
	b.clickAndWait(mainNav+` a[href="/domains"]`, "/domains", `a.domain-link[href$="/domains/mailroom.test"]`)
	b.screenshot("domains")
	b.clickAndWait(`a.domain-link[href$="/domains/mailroom.test"]`, "/domains/mailroom.test", "#records")
	if records := b.textContent("#records"); !strings.Contains(records, "._domainkey.") {
		b.errorf("#records shows no name with ._domainkey.: %q", clip(records, 2000))
	}
	b.screenshot("domain")

	for _, p := range []struct{ href, name string }{
		{"/templates", "templates"}, {"/webhooks", "webhooks"}, {"/suppressions", "suppressions"}, {"/api-keys", "api-keys"},
	} {
		b.step("the " + p.name + " page")
		b.clickAndWait(mainNav+` a[href="`+p.href+`"]`, p.href, "h1")
		if h1 := strings.TrimSpace(b.text("h1")); h1 == "" {
			b.errorf("the %s page's h1 is empty", p.href)
		}
		b.screenshot(p.name)
	}

	b.step("the key stays in sessionStorage")
	b.keyNowhereElse(s.devKey)

	b.step("a phone's width: nothing scrolls sideways")
	b.setViewport(390, 844, true)
	for _, p := range []struct{ path, ready, name string }{
		{"/messages", link, "phone-email-log"},
		{"/messages/" + id, "#timeline", "phone-message"},
		{"/domains/mailroom.test", "#records", "phone-domain"},
	} {
		b.navigate(p.path)
		b.waitLoaded(p.ready)
		if p.ready == "#timeline" {
			if got := b.frameText("iframe#html-preview"); !strings.Contains(got, "Hello there") {
				b.errorf("on a phone, the html preview shows %q, want the message's html (Hello there)", got)
			}
		}
		b.screenshot(p.name)
		if problem := b.sideways(390); problem != "" {
			b.errorf("%s on a phone: %s", p.path, problem)
		}
	}
	b.setViewport(1280, 900, false)

	b.step("sign out")
	b.signOut()

	b.step("a send-only key")
	b.signIn(sendKey)
	b.waitLoaded(link)
	b.checkNav([]string{"/messages", "/suppressions"}, []string{"/domains", "/templates", "/webhooks", "/api-keys"})
	b.screenshot("send-only-key")
	b.keyNowhereElse(sendKey)
	b.signOut()

	b.step("the end: no console errors, nothing fetched from elsewhere")
	b.keyNowhereElse(s.devKey)
	if errs := b.ConsoleErrors(); len(errs) > 0 {
		t.Errorf("the dashboard logged %d console errors or exceptions:\n  %s", len(errs), strings.TrimSpace(strings.ReplaceAll(fmtEntries(errs), "\n", "\n  ")))
	}
	if off := b.OffOrigin(); len(off) > 0 {
		t.Errorf("the dashboard made requests outside %s:\n  %s", b.origin, strings.Join(off, "\n  "))
	}
	for _, p := range b.AllProblems() {
		if p.expected != "" {
			t.Logf("an expected error: %s", p)
		}
	}
	if !t.Failed() {
		t.Logf("%d requests, all to %s; %d visited URLs", len(b.Requests()), b.origin, len(b.Visited()))
	}
}

// signInSubmit is the sign-in form's submit button.
const signInSubmit = `form#sign-in button:not([type]), form#sign-in button[type="submit"], form#sign-in input[type="submit"]`

// signIn pastes key into the sign-in field, as a person pastes it (one
// insertText input, no key presses), and submits the form.
func (b *browser) signIn(key string) {
	b.t.Helper()
	b.waitVisible(`form#sign-in input#api-key`)
	b.do("pasting the key and submitting",
		chromedp.Focus(chromedp.CSS(`#api-key`)),
		chromedp.Evaluate[chromedp.Void](`document.querySelector("#api-key").select()`),
		chromedp.Func(func(ctx context.Context, t *chromedp.Target) error {
			_, err := chromedp.Call(ctx, input.InsertText, input.InsertTextParams{Text: key})
			return err
		}),
	)
	if got := evalJS[string](b, `document.querySelector("#api-key").value`); got != key {
		b.fatalf("the sign-in field holds %q after pasting %q", got, key)
	}
	b.do("clicking the sign-in button", chromedp.Click(chromedp.CSS(signInSubmit)))
}

// signOut clicks #sign-out and checks the sign-in form is back and
// sessionStorage holds no key.
func (b *browser) signOut() {
	b.t.Helper()
	b.waitVisible("#sign-out")
	b.do("clicking #sign-out", chromedp.Click(chromedp.CSS("#sign-out")))
	b.waitVisible(`form#sign-in input#api-key`)
	if stored := b.storedKey(); stored != nil {
		b.errorf("after signing out, sessionStorage %q still holds %q", "mailroom.apiKey", *stored)
	}
	if n := evalJS[int](b, `sessionStorage.length`); n != 0 {
		b.errorf("after signing out, sessionStorage holds %d items: %s", n,
			evalJS[string](b, `JSON.stringify(Object.keys(sessionStorage))`))
	}
	if n := b.count(mainNav); n != 0 {
		b.errorf("after signing out, the main navigation is still shown")
	}
	b.screenshot("signed-out")
}

// storedKey is sessionStorage's "mailroom.apiKey", nil when absent.
func (b *browser) storedKey() *string {
	b.t.Helper()
	return evalJS[*string](b, `sessionStorage.getItem("mailroom.apiKey")`)
}

// checkNav checks the main navigation links to each of want and to none of
// absent.
func (b *browser) checkNav(want, absent []string) {
	b.t.Helper()
	b.waitVisible(mainNav)
	paths := evalJS[[]string](b, `Array.from(document.querySelectorAll('nav[aria-label="Main"] a[href]'), (a) => a.getAttribute("href"))`)
	for _, p := range want {
		if !slices.Contains(paths, p) {
			b.errorf("the main navigation has no link to %s; its links: %q", p, paths)
		}
	}
	for _, p := range absent {
		if slices.Contains(paths, p) {
			b.errorf("the main navigation links to %s, which the key's scopes do not allow; its links: %q", p, paths)
		}
	}
}

// keyNowhereElse checks key is in no cookie (document.cookie, and the
// browser's cookie jar, HttpOnly ones included), in no URL the page asked
// for or showed, in no history entry, and not in localStorage.
func (b *browser) keyNowhereElse(key string) {
	b.t.Helper()
	if c := evalJS[string](b, `document.cookie`); c != "" {
		b.errorf("document.cookie is %q, want empty", c)
	}
	ctx, cancel := context.WithTimeout(b.ctx, waitTimeout)
	defer cancel()
	cookies, err := chromedp.Call(ctx, network.GetCookies, network.GetCookiesParams{URLs: []string{b.s.base + "/"}})
	if err != nil {
		b.fatalf("reading the cookie jar: %v", err)
	}
	for _, c := range cookies.Cookies {
		b.errorf("the browser holds a cookie for %s: %s=%q (HttpOnly %v)", b.s.base, c.Name, c.Value, c.HTTPOnly)
	}
	var urls []string
	urls = append(urls, b.Requests()...)
	urls = append(urls, b.Visited()...)
	history, err := chromedp.Run(ctx, chromedp.NavigationEntries())
	if err != nil {
		b.fatalf("reading the history: %v", err)
	}
	for _, e := range history.Entries {
		urls = append(urls, e.URL)
	}
	for _, u := range urls {
		if strings.Contains(u, key) || strings.Contains(u, strings.TrimPrefix(key, "mailroom_")) {
			b.errorf("a URL holds the API key: %s", u)
		}
	}
	if n := evalJS[int](b, `Object.values(localStorage).filter((v) => v.includes(`+jsString(key)+`)).length`); n != 0 {
		b.errorf("localStorage holds the API key")
	}
}

// noDialog fails the test if the page opened an alert, confirm or prompt.
func (b *browser) noDialog() {
	b.t.Helper()
	for _, p := range b.AllProblems() {
		if p.kind == "dialog" {
			b.errorf("the page opened a dialog (markup from the data ran?): %s", p.text)
		}
	}
}

func deref(p *string) string {
	if p == nil {
		return "nothing"
	}
	return fmt.Sprintf("%q", *p)
}
