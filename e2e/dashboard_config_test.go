package e2e

import (
	"context"
	"fmt"
	"github.com/mailroom/mailroom/apitest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	cdpbrowser "github.com/chromedp/cdproto/browser"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
)

// The dashboard's domains and templates pages, as a user meets them in a
// real browser: the sandbox domain's records with copy buttons and a check
// on demand, adding a domain and seeing the records to publish, making a
// template, editing it, previewing it with test values, its versions, and
// deleting it; on a desktop and a 390-pixel phone.
func TestDashboardDomainsAndTemplates(t *testing.T) {
	browserOrSkip(t)
	s := startServer(t, filepath.Join(t.TempDir(), "mailroom-data"), "--dev")
	b := newBrowser(t, s)

	b.at = "sign in"
	b.navigate("/")
	b.waitVisible("form#sign-in input#api-key")
	b.do("typing the key and signing in",
		chromedp.SendKeys(chromedp.CSS("#api-key"), s.devKey),
		chromedp.Click(chromedp.CSS(`form#sign-in button[type="submit"]`)))
	b.waitVisible(`nav[aria-label="Main"] a[href="/domains"]`)

	// ---- Domains ----
	b.at = "the domains list"
	b.cfgClick(`nav[aria-label="Main"] a[href="/domains"]`)
	b.waitLoaded("a.domain-link")
	b.waitFor("the domains page", `location.pathname === "/domains"`)
	if got := b.text("h1"); got != "Domains" {
		b.errorf("the domains page's h1 is %q", got)
	}
	if got := b.text("a.domain-link"); got != "mailroom.test" {
		b.errorf("the first domain link is %q, want mailroom.test", got)
	}
	if got := b.text("#domains tbody tr"); !strings.Contains(got, "verified") {
		b.errorf("the sandbox domain's row does not say verified: %q", got)
	}
	b.cfgShot("domains")

	b.at = "the sandbox domain's page"
	b.cfgClick(`a.domain-link[href="/domains/mailroom.test"]`)
	b.waitLoaded("#records")
	b.waitFor("the domain page", `location.pathname === "/domains/mailroom.test" && document.querySelector("h1").textContent === "mailroom.test"`)
	if n := b.count("#records li.record"); n != 4 {
		b.errorf("mailroom.test shows %d records, want 4 (DKIM, SPF, return path, DMARC)", n)
	}
	dkimName := evalJS[string](b, `(() => {
		const code = Array.from(document.querySelectorAll("#records .record-name code")).find((c) => c.textContent.includes("._domainkey."));
		return code ? code.textContent : "";
	})()`)
	if !strings.HasSuffix(dkimName, "._domainkey.mailroom.test") {
		b.fatalf("no record name containing ._domainkey. on the page (got %q)", dkimName)
	}
	copySel := `#records li[data-purpose="dkim"] .record-name button`
	if label := evalJS[string](b, `document.querySelector(`+jsString(copySel)+`)?.getAttribute("aria-label") || ""`); !strings.HasPrefix(label, "Copy") {
		b.errorf("the DKIM name's copy button is labelled %q", label)
	}
	for _, want := range []string{"DKIM", "SPF", "Return path", "DMARC", "Required", "Recommended", "TXT", "MX", "Priority"} {
		if !strings.Contains(b.textContent("#records"), want) {
			b.errorf("the records section does not show %q", want)
		}
	}
	// Copying puts the name on the clipboard and says so.
	b.cfgGrantClipboard()
	b.cfgClick(copySel)
	b.waitFor("the copy toast", `document.querySelector("#toasts").textContent.includes("Copied")`)
	if got := evalJS[string](b, `navigator.clipboard.readText().catch((e) => "unreadable: " + e.message)`); got != dkimName && !strings.HasPrefix(got, "unreadable") {
		b.errorf("after copying the DKIM name the clipboard holds %q, want %q", got, dkimName)
	}
	b.cfgShot("domain-sandbox")

	b.at = "verify now"
	if got := b.cfgFact("Last checked"); got != "Sandbox domain: not checked in DNS" {
		b.errorf("the sandbox domain's Last checked says %q", got)
	}
	b.cfgClick("#verify-domain")
	b.waitFor("the check's result", `document.querySelector("#verify-result .alert") !== null && !document.querySelector("#verify-domain").disabled`)
	// The sandbox has no public records: a check leaves it verified.
	if r := s.client.Do(apitest.Request{Method: "GET", Path: "/v1/domains/mailroom.test", Key: s.devKey}); r.Str("status") != "verified" {
		b.errorf("after Verify now, the sandbox domain is %s", r.Body)
	}
	if got := b.text("#verify-result"); !strings.Contains(got, "Checked") {
		b.errorf("the check's result says %q", got)
	}
	b.cfgShot("domain-verified-now")

	b.at = "adding a domain"
	b.cfgClick(`a.back-link[href="/domains"]`)
	b.waitLoaded("#add-domain")
	b.cfgClick("#add-domain")
	b.waitVisible("dialog[open] input#domain-name")
	// A public suffix is refused, in the dialog, with the service's words.
	refusedDomain := b.expectErrors("adding a public suffix answers 400", func(e consoleEntry) bool {
		return strings.HasPrefix(e.kind, "log:") && strings.Contains(e.text, "400") && strings.HasSuffix(e.text, "/v1/domains]")
	})
	b.do("typing a public suffix", chromedp.SendKeys(chromedp.CSS("#domain-name"), "co.uk"))
	b.cfgClick(`#add-domain-form button[type="submit"]`)
	b.waitFor("the refusal in the dialog", `document.querySelector("dialog[open] .alert-error") !== null`)
	if got := b.text("dialog[open] .alert-error"); !strings.Contains(got, "name") {
		b.errorf("the refusal does not name the field: %q", got)
	}
	if got := evalJS[string](b, `document.querySelector("#domain-name").getAttribute("aria-invalid") || ""`); got != "true" {
		b.errorf("the refused name is not marked invalid (aria-invalid %q)", got)
	}
	b.cfgShot("add-domain-refused")
	refusedDomain()
	b.do("typing the domain",
		chromedp.Evaluate[chromedp.Void](`document.querySelector("#domain-name").select()`),
		chromedp.SendKeys(chromedp.CSS("#domain-name"), "Example.ORG"))
	b.cfgShot("add-domain-dialog")
	b.cfgClick(`#add-domain-form button[type="submit"]`)
	b.waitFor("the new domain's page", `location.pathname === "/domains/example.org" && document.querySelector('main[aria-busy="false"] #records') !== null`)
	if got := b.text("h1"); got != "example.org" {
		b.errorf("the new domain's h1 is %q", got)
	}
	if got := b.text(".card .section-head .badge"); got != "pending" {
		b.errorf("the new domain's status badge says %q, want pending", got)
	}
	states := evalJS[[]string](b, `Array.from(document.querySelectorAll("#records li.record .record-head .badge"), (e) => e.textContent)`)
	if len(states) != 4 || strings.Join(states, ",") != "pending,pending,pending,pending" {
		b.errorf("the new domain's records are %q, want four pending", states)
	}
	if !strings.Contains(b.text("#records"), "._domainkey.example.org") {
		b.errorf("the new domain's records have no DKIM name under example.org")
	}
	if got := b.text("#records .records-note"); !strings.Contains(got, "48 hours") || !strings.Contains(got, "automatically") {
		b.errorf("the records section does not say how long DNS takes: %q", got)
	}
	b.cfgShot("domain-added")

	b.at = "the domains list with two domains"
	b.cfgClick(`a.back-link[href="/domains"]`)
	b.waitLoaded("a.domain-link")
	if n := b.count("a.domain-link"); n != 2 {
		b.errorf("the domains list shows %d domains after adding one, want 2", n)
	}

	// ---- Templates ----
	b.at = "the empty templates list"
	b.cfgClick(`nav[aria-label="Main"] a[href="/templates"]`)
	b.waitLoaded("#templates-empty")
	b.waitFor("the templates page", `location.pathname === "/templates"`)
	if got := b.text("#templates-empty"); !strings.Contains(got, "variables") {
		b.errorf("the empty templates page does not say what a template is for: %q", got)
	}
	b.cfgShot("templates-empty")

	b.at = "a new template"
	b.cfgClick("#new-template")
	b.waitVisible("dialog[open] input#template-name")
	b.do("filling in the new template",
		chromedp.SendKeys(chromedp.CSS("#template-name"), "welcome"),
		chromedp.SendKeys(chromedp.CSS("#template-subject"), "Welcome, {{name}}"),
		chromedp.SendKeys(chromedp.CSS("#template-description"), "Sent when someone signs up"))
	b.cfgClick(`#new-template-form button[type="submit"]`)
	b.waitFor("the new template's page", `location.pathname === "/templates/welcome" && document.querySelector('main[aria-busy="false"] #template-editor') !== null`)
	if got := b.text("h1"); got != "welcome" {
		b.errorf("the new template's h1 is %q", got)
	}
	// It opens with its preview drawn, a sample in place of each value.
	b.waitFor("the preview with samples", `document.querySelector("#preview-frame").srcdoc.includes("Hello [name]")`)
	if got := b.text("#preview-subject"); got != "Welcome, [name]" {
		b.errorf("the sample preview's subject is %q", got)
	}
	if n := evalJS[int](b, `Array.from(document.querySelectorAll("#preview .preview-bar")).filter((e) => e.offsetParent !== null).length`); n != 0 {
		b.errorf("the preview offers remote images for html that has none")
	}
	b.cfgShot("template-new")

	b.at = "html that does not parse"
	refused := b.expectErrors("saving html that does not parse answers 400", func(e consoleEntry) bool {
		return strings.HasPrefix(e.kind, "log:") && strings.Contains(e.text, "400") && strings.HasSuffix(e.text, "/v1/templates/welcome]")
	})
	b.do("breaking the html",
		chromedp.Evaluate[chromedp.Void](`document.querySelector("#tpl-html").select()`),
		chromedp.SendKeys(chromedp.CSS("#tpl-html"), "<p>{{#items}}</p>"))
	b.cfgClick("#save-template")
	b.waitFor("the refusal", `document.querySelector("#template-editor .alert-error") !== null && !document.querySelector("#save-template").disabled`)
	if got := b.text("#template-editor .alert-error"); !strings.Contains(got, "html") || !strings.Contains(got, "never closed") {
		b.errorf("the refusal does not say what is wrong with the html: %q", got)
	}
	if got := evalJS[string](b, `document.activeElement.id + " " + (document.querySelector("#tpl-html").getAttribute("aria-invalid") || "")`); got != "tpl-html true" {
		b.errorf("after the refusal, focus and aria-invalid are %q, want the html field marked invalid and focused", got)
	}
	refused()

	b.at = "editing the html"
	newHTML := `<img src="https://images.example/logo.png" alt="Acme" width="120"><h1 style="color:#3730a3">Hi {{name}}</h1><p>Thanks for joining {{company}}.</p>`
	b.do("replacing the html",
		chromedp.Evaluate[chromedp.Void](`document.querySelector("#tpl-html").select()`),
		chromedp.SendKeys(chromedp.CSS("#tpl-html"), newHTML),
		// An empty text part is made from the html.
		chromedp.Evaluate[chromedp.Void](`document.querySelector("#tpl-text").select()`),
		chromedp.SendKeys(chromedp.CSS("#tpl-text"), kb.Backspace))
	b.waitFor("the unsaved-changes note", `document.querySelector("#save-state").textContent.includes("Unsaved")`)
	b.cfgClick("#save-template")
	b.waitFor("the save", `document.querySelector("#save-state").textContent.includes("version 2")`)
	b.waitFor("the save's toast", `document.querySelector("#toasts").textContent.includes("version 2")`)
	vars := evalJS[[]string](b, `Array.from(document.querySelectorAll("#preview input[data-var]"), (e) => e.dataset.var)`)
	if strings.Join(vars, ",") != "company,name" {
		b.errorf("after saving, the preview offers inputs for %q, want company and name", vars)
	}
	if got := b.text(".page-header .lead"); !strings.Contains(got, "Version 2") {
		b.errorf("after saving, the lead says %q", got)
	}

	b.at = "the live preview"
	// The save renders the preview again, with a request of its own.
	b.waitFor("the preview of version 2", `document.querySelector('#preview[aria-busy="false"]') && document.querySelector("#preview-text").textContent.includes("Thanks for joining")`)
	if got := b.textContent("#preview-text"); !strings.Contains(got, "Thanks for joining [company].") {
		b.errorf("after saving, the preview's text is %q, want the new html's words with samples", got)
	}
	b.cfgType(`#preview input[data-var="name"]`, "Ada")
	b.waitFor("the preview with the name", `document.querySelector("#preview-frame").srcdoc.includes("Hi Ada")`)
	// A value left out is named next to the preview, as help, not as a
	// failure (Chromium logs the 400 that says so).
	missing := b.expectErrors("a render without every variable answers 400 validation_error, which the preview explains",
		func(e consoleEntry) bool {
			return strings.HasPrefix(e.kind, "log:") && strings.Contains(e.text, "400") && strings.HasSuffix(e.text, "/v1/templates/welcome/render]")
		})
	b.cfgType(`#preview input[data-var="company"]`, "")
	b.waitFor("the hint naming company", `document.querySelector("#preview-status").textContent.includes("company")`)
	if got := b.text("#preview-status"); !strings.Contains(got, "type a value for company") {
		b.errorf("the missing-variable hint says %q", got)
	}
	if n := b.count("#preview .alert-error"); n != 0 {
		b.errorf("a missing variable shows as an error: %q", b.text("#preview .alert-error"))
	}
	b.cfgShot("template-missing-value")
	b.cfgType(`#preview input[data-var="company"]`, "Acme & Co")
	b.waitFor("the preview with the values", `document.querySelector("#preview-frame").srcdoc.includes("Acme &amp; Co")`)
	srcdoc := evalJS[string](b, `document.querySelector("#preview-frame").srcdoc`)
	if !strings.HasPrefix(srcdoc, `<!doctype html><meta charset="utf-8"><meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'; img-src data:; font-src data:">`) {
		b.errorf("the preview document does not start with its own policy: %q", clip(srcdoc, 200))
	}
	if !strings.Contains(srcdoc, "Thanks for joining Acme &amp; Co.") {
		b.errorf("the preview does not show the escaped company: %q", srcdoc)
	}
	if sb := evalJS[*string](b, `document.querySelector("#preview-frame").getAttribute("sandbox")`); sb == nil || *sb != "" {
		b.errorf("the preview iframe's sandbox attribute is %v, want present and empty", sb)
	}
	// The remote logo is not fetched until asked for: it is taken out of
	// the document, and the preview says so.
	if strings.Contains(srcdoc, "images.example") {
		b.errorf("the preview document still references the remote image: %q", srcdoc)
	}
	if got := b.text("#preview .preview-bar"); !strings.Contains(got, "1 remote image is not loaded") {
		b.errorf("the preview does not say the remote image is blocked: %q", got)
	}
	if got := b.text("#preview-subject"); got != "Welcome, Ada" {
		b.errorf("the rendered subject is %q", got)
	}
	if got := b.text("#preview-text"); !strings.Contains(got, "Hi Ada") || !strings.Contains(got, "Acme & Co") {
		b.errorf("the rendered text is %q", got)
	}
	// Markup typed as a value is text in the preview, never an element.
	b.cfgType(`#preview input[data-var="name"]`, `<img src=x onerror=alert(1)>`)
	b.waitFor("the escaped name in the preview", `document.querySelector("#preview-frame").srcdoc.includes("Hi &lt;img src=x onerror=alert(1)&gt;")`)
	b.cfgType(`#preview input[data-var="name"]`, "Ada")
	b.waitFor("the preview with Ada", `document.querySelector("#preview-frame").srcdoc.includes("Hi Ada") && document.querySelector('#preview[aria-busy="false"]')`)
	missing() // every render since has had its values, and answered 200
	b.cfgShot("template")

	b.at = "the versions"
	if n := b.count("#versions-table tbody tr"); n != 2 {
		b.errorf("the versions list shows %d versions, want 2", n)
	}
	if got := b.text("#versions-table tbody tr"); !strings.Contains(got, "v2") || !strings.Contains(got, "current") {
		b.errorf("the newest version row says %q, want v2, current", got)
	}
	b.cfgClick(`#versions-table button[aria-label="View version 1"]`)
	b.waitVisible("dialog[open] .version-view pre.source")
	if got := b.textContent("dialog[open] .version-view pre.source"); !strings.Contains(got, "<p>Hello {{name}},</p>") {
		b.errorf("version 1's html in the dialog is %q", got)
	}
	b.cfgShot("template-version-1")
	b.do("closing the version", chromedp.KeyEvent("\x1b"))
	b.waitFor("the dialog to close", `document.querySelector("dialog[open]") === null`)

	// ---- A phone ----
	b.at = "390 pixels wide"
	b.setViewport(390, 844, true)
	for _, p := range []struct{ path, ready string }{
		{"/templates/welcome", "#preview-frame"},
		{"/templates", "a.template-link"},
		{"/domains/example.org", "#records"},
		{"/domains", "a.domain-link"},
	} {
		b.at = p.path + " at 390 pixels"
		b.navigate(p.path)
		b.waitLoaded(p.ready)
		if p.path == "/templates/welcome" {
			// The test values typed before are kept for the tab.
			b.waitFor("the preview with the values typed before", `document.querySelector("#preview-frame").srcdoc.includes("Hi Ada") && document.querySelector('#preview[aria-busy="false"]')`)
			// A full-page capture leaves a phone's out-of-view frames
			// blank: this one shows the preview as a person sees it.
			b.cfgViewportShot("phone-template-preview", "#preview-frame")
		}
		if got := b.sideways(390); got != "" {
			b.errorf("%s scrolls sideways: %s", p.path, got)
		}
		b.cfgShot("phone" + strings.ReplaceAll(p.path, "/", "-"))
	}
	b.setViewport(1280, 900, false)

	// ---- Deleting the template ----
	b.at = "deleting the template"
	b.navigate("/templates")
	b.waitLoaded("a.template-link")
	if got := b.text("#templates tbody tr"); !strings.Contains(got, "welcome") || !strings.Contains(got, "v2") || !strings.Contains(got, "Sent when someone signs up") {
		b.errorf("the templates list row says %q", got)
	}
	b.cfgShot("templates")
	b.cfgClick(`a.template-link[href="/templates/welcome"]`)
	b.waitLoaded("#delete-template")
	b.cfgClick("#delete-template")
	b.waitVisible("dialog[open] .btn-danger")
	b.cfgShot("delete-template-confirm")
	b.cfgClick("dialog[open] .btn-danger")
	b.waitFor("the templates list after deleting", `location.pathname === "/templates" && document.querySelector('main[aria-busy="false"] #templates-empty') !== null`)
	b.waitFor("the delete toast", `document.querySelector("#toasts").textContent.includes("Deleted welcome")`)

	b.at = "deleting the domain"
	b.navigate("/domains/example.org")
	b.waitLoaded("#delete-domain")
	b.cfgClick("#delete-domain")
	b.waitVisible("dialog[open] .btn-danger")
	if got := b.text("dialog[open]"); !strings.Contains(got, "Delete example.org?") {
		b.errorf("the confirmation says %q", got)
	}
	b.cfgClick("dialog[open] .btn-danger")
	b.waitFor("the domains list after deleting", `location.pathname === "/domains" && document.querySelector('main[aria-busy="false"] a.domain-link') !== null`)
	if links := evalJS[[]string](b, `Array.from(document.querySelectorAll("a.domain-link"), (a) => a.textContent)`); strings.Join(links, ",") != "mailroom.test" {
		b.errorf("after deleting example.org the list shows %q", links)
	}

	b.at = "the end"
	if errs := b.ConsoleErrors(); len(errs) > 0 {
		t.Errorf("the pages logged %d console errors or exceptions:\n  %s", len(errs), strings.TrimSpace(strings.ReplaceAll(fmtEntries(errs), "\n", "\n  ")))
	}
	for _, p := range b.AllProblems() {
		if p.kind == "dialog" {
			t.Errorf("the page opened a dialog: %s", p.text)
		}
	}
	if off := b.OffOrigin(); len(off) > 0 {
		t.Errorf("the pages made requests outside %s:\n  %s", b.origin, strings.Join(off, "\n  "))
	}
}

// cfgShot scrolls to the top of the page and takes a full-page screenshot.
func (b *browser) cfgShot(name string) {
	b.t.Helper()
	evalJS[int](b, `(window.scrollTo(0, 0), 1)`)
	b.screenshot(name)
}

// cfgViewportShot scrolls sel to the middle of the screen and captures
// what the screen shows, named as the harness names its screenshots.
func (b *browser) cfgViewportShot(name, sel string) {
	b.t.Helper()
	evalJS[int](b, `(document.querySelector(`+jsString(sel)+`).scrollIntoView({block: "center"}), 1)`)
	ctx, cancel := context.WithTimeout(b.ctx, waitTimeout)
	defer cancel()
	png, err := chromedp.Run(ctx, chromedp.CaptureScreenshot())
	if err != nil {
		b.t.Logf("screenshot %s: %v", name, err)
		return
	}
	b.shots++
	file := filepath.Join(b.dir, fmt.Sprintf("%s-%02d-%s.png", b.prefix, b.shots, name))
	if err := os.WriteFile(file, png, 0o644); err != nil {
		b.t.Logf("screenshot %s: %v", name, err)
		return
	}
	b.t.Logf("screenshot: %s", file)
}

// cfgType replaces what the field sel holds with text, typed key by key
// (selecting all, then typing over it, or deleting it when text is "").
func (b *browser) cfgType(sel, text string) {
	b.t.Helper()
	if text == "" {
		text = kb.Backspace
	}
	b.do("typing into "+sel,
		chromedp.Evaluate[chromedp.Void](`document.querySelector(`+jsString(sel)+`).select()`),
		chromedp.SendKeys(chromedp.CSS(sel), text))
}

// cfgClick waits for sel to be visible and clicks it.
func (b *browser) cfgClick(sel string) {
	b.t.Helper()
	b.waitVisible(sel)
	b.do("clicking "+sel, chromedp.Click(chromedp.CSS(sel)))
}

// cfgFact is the text of the domain page's fact labelled label.
func (b *browser) cfgFact(label string) string {
	b.t.Helper()
	return evalJS[string](b, `(() => {
		const dt = Array.from(document.querySelectorAll("dl.facts dt")).find((e) => e.textContent === `+jsString(label)+`);
		return dt ? dt.nextElementSibling.textContent : "";
	})()`)
}

// cfgGrantClipboard lets the page write and read the clipboard, as a
// person's browser does after a click.
func (b *browser) cfgGrantClipboard() {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, waitTimeout)
	defer cancel()
	for _, name := range []string{"clipboard-write", "clipboard-read"} {
		_, err := chromedp.CallBrowser(ctx, cdpbrowser.SetPermission, cdpbrowser.SetPermissionParams{
			Permission: &cdpbrowser.PermissionDescriptor{Name: name}, Setting: "granted", Origin: b.origin,
		})
		if err != nil {
			b.t.Logf("granting %s: %v", name, err)
		}
	}
}
