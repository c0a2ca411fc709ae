package e2e

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"
)

// The email log when a load fails: a filter the service refuses (400) is
// shown as that error, not as a lost connection, and is not sent again
// until the filters change; a service that cannot be reached is "connection
// lost", tried again until it is back.
func TestDashboardLogFailures(t *testing.T) {
	browserOrSkip(t)
	s := startServer(t, filepath.Join(t.TempDir(), "mailroom-data"), "--dev")
	b := newBrowser(t, s)

	b.step("sign in")
	b.navigate("/")
	b.signIn(s.devKey)
	b.waitLoaded(mainNav)

	b.step("the filters line up")
	// At 1280 pixels the first row holds Recipient, From, Status and Tags:
	// each label and control starts at one height, and a select is as tall
	// as an input.
	type box struct{ LabelTop, ControlTop, ControlHeight float64 }
	boxes := evalJS[[]box](b, `Array.from(document.querySelectorAll(".filters-card > .filters .field"), (f) => ({
		LabelTop: f.querySelector("label").getBoundingClientRect().top,
		ControlTop: f.querySelector("input, select").getBoundingClientRect().top,
		ControlHeight: f.querySelector("input, select").getBoundingClientRect().height}))`)
	if len(boxes) != 4 {
		b.fatalf("%d filter fields in the first row, want 4", len(boxes))
	}
	for i, x := range boxes[1:] {
		if d := max(abs(x.LabelTop-boxes[0].LabelTop), abs(x.ControlTop-boxes[0].ControlTop), abs(x.ControlHeight-boxes[0].ControlHeight)); d > 0.5 {
			b.errorf("filter %d is %.1f pixels out of line with the first: %+v against %+v", i+2, d, x, boxes[0])
		}
	}

	b.step("a filter the service refuses")
	refused := b.expectErrors("GET /v1/messages?to=notanemail answers 400", func(e consoleEntry) bool {
		return strings.HasPrefix(e.kind, "log:") && strings.Contains(e.text, "400") && strings.Contains(e.text, "/v1/messages?")
	})
	logLoads := func(to string) int {
		n := 0
		for _, r := range b.Requests() {
			if strings.HasPrefix(r, s.base+"/v1/messages?") && strings.Contains(r, "to="+to) {
				n++
			}
		}
		return n
	}
	b.navigate("/messages?to=notanemail")
	b.waitLoaded(".log-list .alert-error")
	if got := b.text(".log-list .alert-error"); !strings.Contains(got, "400 validation_error") {
		b.errorf("the refused filter's error says %q, want the service's 400 validation_error", got)
	}
	// Longer than a refresh period (5 s), on the page's clock: a page
	// that retried would have asked again by then.
	b.waitPageClock(6 * time.Second)
	if n := logLoads("notanemail"); n != 1 {
		b.errorf("the refused filter was requested %d times in 6 s, want once", n)
	}
	if live := b.text(".page-header"); strings.Contains(live, "Connection lost") || strings.Contains(live, "retrying") {
		b.errorf("a refused filter shows as a lost connection: the header says %q", live)
	}
	b.screenshot("log-refused-filter")
	refused()

	b.step("changing the filter: the log loads and follows again")
	b.do("typing a valid recipient",
		chromedp.Evaluate[chromedp.Void](`document.querySelector('input[name="to"]').select()`),
		chromedp.SendKeys(chromedp.CSS(`input[name="to"]`), "ann@example.com"),
		chromedp.Click(chromedp.CSS(`.filters-card button[type="submit"]`)))
	b.waitLoaded("#message-list")
	b.waitFor("the live note", `document.querySelector(".live:not([hidden])")?.textContent === "Live"`)
	b.waitRecorded("a refresh of the changed filter", func() bool { return logLoads("ann%40example.com") >= 2 })

	b.step("a lost connection is retried")
	offline := b.expectErrors("the log's refresh fails while the browser is offline", func(e consoleEntry) bool {
		return strings.Contains(e.text, "net::ERR_") && strings.Contains(e.text, "/v1/messages?")
	})
	b.network(true)
	b.waitFor("the lost-connection note", `document.querySelector(".live.live-lost")?.textContent.includes("Connection lost")`)
	b.screenshot("log-connection-lost")
	b.network(false)
	b.waitFor("the log to follow again", `document.querySelector(".live:not(.live-lost)")?.textContent === "Live"`)
	offline()

	b.step("the filters on a phone")
	b.setViewport(390, 844, true)
	b.navigate("/messages?to=ann%40example.com&status=delivered")
	b.waitLoaded("#message-list")
	b.screenshot("phone-log-filtered")
	if problem := b.sideways(390); problem != "" {
		b.errorf("the filtered log on a phone: %s", problem)
	}
	b.setViewport(1280, 900, false)

	if errs := b.ConsoleErrors(); len(errs) > 0 {
		t.Errorf("the log logged %d console errors or exceptions:\n  %s", len(errs), strings.TrimSpace(strings.ReplaceAll(fmtEntries(errs), "\n", "\n  ")))
	}
}

func abs(x float64) float64 {
	if x < 0 {
		return -x
	}
	return x
}

// network takes the tab off the network (offline) or back on.
func (b *browser) network(offline bool) {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, waitTimeout)
	defer cancel()
	_, err := chromedp.Call(ctx, network.EmulateNetworkConditionsByRule, network.EmulateNetworkConditionsByRuleParams{
		MatchedNetworkConditions: []*network.Conditions{{Offline: offline, DownloadThroughput: -1, UploadThroughput: -1}}})
	if err != nil {
		b.fatalf("emulating offline=%v: %v", offline, err)
	}
}
