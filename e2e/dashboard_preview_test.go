package e2e

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/mailroom/mailroom/apitest"
)

// A message's html preview addresses nothing but what the mail names
// absolutely: a relative or protocol-less link or image would resolve
// against the dashboard (a srcdoc frame's base is its parent's address),
// and is taken out; absolute links open in a new tab. "Load remote images"
// loads images and nothing else: no prefetch, stylesheet or refresh.
func TestDashboardMessagePreviewReferences(t *testing.T) {
	browserOrSkip(t)
	s := startServer(t, filepath.Join(t.TempDir(), "mailroom-data"), "--dev")
	host := strings.TrimPrefix(s.base, "https://")
	html := `<p id="top">Preview check</p>
<p><a id="internal" href="/api-keys">internal</a> <a href="//` + host + `/api-keys?from=bare-link">protocol-less</a>
<a href="#top">top</a> <a href="javascript:alert(1)">script</a> <a href="https:/api-keys?from=one-slash">one slash</a>
<a id="external" href="https://example.com/page" target="_self">external</a> <a href="mailto:ann@example.com">mail</a></p>
<img src="/v1/api-keys?from=img" alt="relative"><img src="//` + host + `/v1/api-keys?from=bare-img" alt="protocol-less">
<img src="https://img.invalid/remote.png" alt="remote" width="10" height="10">
<img srcset="/v1/api-keys?from=srcset 1x, https://img.invalid/srcset.png 2x" alt="srcset">
<div id="bg" style="height:4px;background-image:url('/v1/api-keys?from=css')"></div>
<div style="height:4px;background-image:url(https://img.invalid/background.png)"></div>
<link rel="prefetch" href="https://prefetch.invalid/prefetch">
<link rel="stylesheet" href="/v1/api-keys?from=stylesheet">
<meta http-equiv="refresh" content="30;url=/v1/api-keys?from=refresh">`
	r := s.client.Do(apitest.Request{Method: "POST", Path: "/v1/send", Key: s.devKey, Body: map[string]any{
		"from": "Shop <orders@mailroom.test>", "to": "ann@example.com", "subject": "References", "html": html}})
	if r.Status != 200 {
		t.Fatalf("send: %d %s", r.Status, r.Body)
	}
	id := r.Str("messageId")
	b := newBrowser(t, s)
	// The remote images fail to load (.invalid names nothing).
	remoteFails := b.expectErrors("the remote images name .invalid hosts", func(e consoleEntry) bool {
		return strings.Contains(e.text, ".invalid/")
	})
	defer remoteFails()

	b.navigate("/")
	b.signIn(s.devKey)
	b.waitLoaded(mainNav)
	b.navigate("/messages/" + id)
	b.waitLoaded("iframe#html-preview")

	fromMail := func() []string { // requests the mail's references made
		var out []string
		for _, u := range b.Requests() {
			if strings.Contains(u, "from=") || strings.Contains(u, ".invalid/") {
				out = append(out, u)
			}
		}
		return out
	}
	check := func(when string) {
		b.t.Helper()
		if got := b.frameText("iframe#html-preview"); !strings.Contains(got, "Preview check") {
			b.fatalf("%s: the preview shows %q", when, got)
		}
		links := frameEval[[]string](b, "iframe#html-preview", `Array.from(document.links, (a) => a.href)`)
		if want := []string{"https://example.com/page", "mailto:ann@example.com"}; !slices.Equal(links, want) {
			b.errorf("%s: the preview's links go to %q, want only %q", when, links, want)
		}
		if n := frameEval[int](b, "iframe#html-preview", `document.querySelectorAll("a[target], link, meta[http-equiv=refresh i]").length`); n != 0 {
			b.errorf("%s: the preview keeps %d link or refresh elements or link targets", when, n)
		}
		if tgt := frameEval[string](b, "iframe#html-preview", `document.querySelector("base")?.target ?? ""`); tgt != "_blank" {
			b.errorf("%s: links open in %q, want _blank", when, tgt)
		}
		refs := frameEval[[]string](b, "iframe#html-preview", `[...Array.from(document.images, (i) => i.currentSrc || i.src),
			getComputedStyle(document.getElementById("bg")).backgroundImage]`)
		for _, ref := range refs {
			if strings.Contains(ref, host) {
				b.errorf("%s: the preview loads %s from the dashboard", when, ref)
			}
		}
	}

	b.step("the message id is whole")
	// At 1280 pixels the id has room for one line: it is not broken
	// mid-token in a narrow column.
	if lines := evalJS[int](b, `(() => { const r = document.createRange(); r.selectNodeContents(document.querySelector("dl.facts dd code"));
		return new Set(Array.from(r.getClientRects(), (x) => Math.round(x.top))).size; })()`); lines != 1 {
		b.errorf("the message id %s takes %d lines", id, lines)
	}

	b.step("remote images blocked")
	check("remote images blocked")
	b.waitFrameIdle("iframe#html-preview")
	if got := fromMail(); len(got) != 0 {
		b.errorf("with remote images blocked, the preview requested %q", got)
	}
	b.screenshot("preview-blocked")

	b.step("remote images loaded")
	b.do("loading remote images", chromedp.Click(chromedp.CSS(`#panel-html .preview-bar button`)))
	b.waitRecorded("the remote image's request", func() bool {
		return slices.Contains(b.Requests(), "https://img.invalid/remote.png")
	})
	check("remote images loaded")
	// What is not an image (a prefetch) may go out after the images, but
	// not after the frame has gone network-idle.
	b.waitFrameIdle("iframe#html-preview")
	var others []string
	for _, u := range fromMail() {
		if !slices.Contains([]string{"https://img.invalid/remote.png", "https://img.invalid/srcset.png", "https://img.invalid/background.png"}, u) {
			others = append(others, u)
		}
	}
	if len(others) != 0 {
		b.errorf("with remote images loaded, the preview also requested %q (want its images only)", others)
	}
	b.screenshot("preview-remote")
	if errs := b.ConsoleErrors(); len(errs) > 0 {
		t.Errorf("the message page logged %d console errors or exceptions:\n  %s", len(errs), strings.TrimSpace(strings.ReplaceAll(fmtEntries(errs), "\n", "\n  ")))
	}
}
