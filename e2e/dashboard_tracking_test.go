package e2e

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/mailroom/mailroom"
	"github.com/mailroom/mailroom/apitest"
	"github.com/mailroom/mailroom/sqlite"
	"github.com/mailroom/mailroom/storetest"
)

// Engagement tracking in a real browser (docs/api.md "Engagement
// tracking"): the domain's page shows the settings the operator turned on
// from the command line; a tracked message's page shows each recipient's
// opens and clicks, the links with their clicks and, on the timeline, the
// link clicked and the click marked machine; the log's Engagement filter
// keeps the clicked message and leaves out the one never clicked. The
// opens and clicks are recorded beside the running server through the
// store's RecordEngagement, as the tracking service records them (its
// endpoints have tests of their own); the send is scheduled for later so
// that nothing else of the message changes while the page is read.
func TestDashboardTracking(t *testing.T) {
	browserOrSkip(t)
	w := newWorld(t)
	node, key, _ := w.startAcmeNode(t, storetest.SQLite)

	b := newBrowser(t, node)
	b.navigate("/")
	b.signIn(key)
	b.waitLoaded(mainNav)

	b.step("the domain's tracking, off by default, on from the command line")
	b.navigate("/domains/shop.example")
	b.waitLoaded("#domain-open-tracking")
	if got := b.text("#domain-open-tracking") + "|" + b.text("#domain-click-tracking"); got != "Off|Off" {
		b.errorf("a new domain's tracking reads %q, want Off|Off", got)
	}
	cli(t, t.TempDir(), nil, "domains", "update", "shop.example", "--account", "acme", "--open-tracking", "on", "--data-dir", node.dataDir)
	b.navigate("/domains/shop.example")
	b.waitFor("open tracking on", `document.querySelector("#domain-open-tracking")?.textContent.startsWith("On")`)
	if got := b.text("#domain-click-tracking"); got != "Off" {
		b.errorf("click tracking reads %q after turning open tracking on alone", got)
	}
	// Through the node's own API, which its sends follow at once.
	if r := node.client.Do(apitest.Request{Method: "PATCH", Path: "/v1/domains/shop.example", Key: key,
		Body: map[string]any{"openTracking": true, "clickTracking": true}}); r.Status != 200 {
		t.Fatalf("PATCH tracking: %d %s", r.Status, r.Body)
	}
	b.navigate("/domains/shop.example")
	b.waitFor("both settings on", `document.querySelector("#domain-open-tracking")?.textContent.startsWith("On")
		&& document.querySelector("#domain-click-tracking")?.textContent.startsWith("On")`)

	b.step("a tracked message and an untracked one")
	later := time.Now().Add(24 * time.Hour).UTC().Format(time.RFC3339)
	send := func(subject string, tracking map[string]any) string {
		t.Helper()
		body := map[string]any{"from": "orders@shop.example", "to": []string{"ann@example.net", "bob@example.net"}, "subject": subject,
			"html":        `<p><a href="https://shop.example/o?id=1&amp;x=2#top">Your order</a> · <a href="https://shop.example/help">Help</a></p>`,
			"scheduledAt": later}
		if tracking != nil {
			body["tracking"] = tracking
		}
		r := node.client.Do(apitest.Request{Method: "POST", Path: "/v1/send", Key: key, Body: body})
		if r.Status != 200 {
			t.Fatalf("send %s: %d %s", subject, r.Status, r.Body)
		}
		return r.Str("messageId")
	}
	tracked := send("Tracked receipt", nil)
	untracked := send("Untracked receipt", map[string]any{"opens": false, "clicks": false})

	ctx := context.Background()
	store, err := sqlite.OpenExisting(ctx, node.dataDir)
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	links := []string{"https://shop.example/o?id=1&x=2#top", "https://shop.example/help"}
	if err := store.SaveTrackedLinks(ctx, tracked, links); err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	for _, hit := range []*mailroom.EngagementHit{
		{Type: mailroom.EventEmailOpened, MessageID: tracked, Recipient: "ann@example.net", UserAgent: "Mozilla/5.0 (Reader)", IP: "192.0.2.0", At: now},
		{Type: mailroom.EventEmailOpened, MessageID: tracked, Recipient: "ann@example.net", UserAgent: "GoogleImageProxy", IP: "192.0.2.0", Machine: true, At: now},
		// Not delivered yet: a click now is a scanner's (ClickLooksAutomated).
		{Type: mailroom.EventEmailClicked, MessageID: tracked, Recipient: "ann@example.net", LinkIndex: 0, URL: links[0],
			UserAgent: "Mozilla/5.0 (Reader)", IP: "2001:db8:1::", At: now},
	} {
		if _, err := store.RecordEngagement(ctx, hit); err != nil {
			t.Fatalf("record %s: %v", hit.Type, err)
		}
	}

	b.step("the tracked message's page")
	b.navigate("/messages/" + tracked)
	b.waitLoaded("#links")
	cell := func(n int, label string) string {
		return strings.TrimSpace(b.text(fmt.Sprintf(`#recipients tbody tr:nth-child(%d) td[data-label="%s"]`, n, label)))
	}
	if got := cell(1, "Opens") + "/" + cell(1, "Clicks") + " " + cell(2, "Opens") + "/" + cell(2, "Clicks"); got != "2/1 0/0" {
		b.errorf("opens/clicks of ann and bob read %q, want 2/1 0/0", got)
	}
	if got := b.text("#links tbody tr:nth-child(1)"); !strings.Contains(got, links[0]) || !strings.HasSuffix(strings.TrimSpace(got), "1") {
		b.errorf("the first link's row reads %q, want %s with 1 click", got, links[0])
	}
	if got := b.text("#links tbody tr:nth-child(2)"); !strings.Contains(got, links[1]) || !strings.HasSuffix(strings.TrimSpace(got), "0") {
		b.errorf("the second link's row reads %q, want %s with 0 clicks", got, links[1])
	}
	if got := b.text("#tracking"); got != "opens and clicks" {
		b.errorf("the message's tracking reads %q", got)
	}
	timeline := b.text("#timeline")
	for _, want := range []string{"email.opened", "email.clicked", links[0], "from 2001:db8:1::", "Mozilla/5.0 (Reader)"} {
		if !strings.Contains(timeline, want) {
			b.errorf("the timeline lacks %q:\n%s", want, timeline)
		}
	}
	// One open event (the first); the click, before any delivery, is a
	// machine's.
	if n := b.count("#timeline li .event-engagement"); n != 2 {
		b.errorf("%d engagement entries on the timeline, want the first open and the click", n)
	}
	if n := b.count("#timeline li .event-machine"); n != 1 {
		b.errorf("%d entries marked machine, want the click alone", n)
	}
	if got := b.text("#timeline li:has(.event-machine) .event-type"); got != "email.clicked" {
		b.errorf("the machine entry is %q, want email.clicked", got)
	}
	b.screenshot("tracked-message")

	b.step("the untracked message's page has no engagement")
	b.navigate("/messages/" + untracked)
	b.waitLoaded("#recipients")
	if n := b.count("#links") + b.count("#tracking") + b.count(`#recipients td[data-label="Opens"]`); n != 0 {
		b.errorf("an untracked message shows %d pieces of tracking", n)
	}

	b.step("the log's engagement filter")
	b.navigate("/messages")
	b.waitLoaded("#message-list")
	evalJS[int](b, `(document.querySelector(".more-filters").open = true, document.querySelector("select[name=event]").value = "clicked", 1)`)
	b.clickAndWait(`.filter-actions button[type=submit]`, "/messages", "#message-list")
	if got := evalJS[string](b, `location.search`); got != "?event=clicked" {
		b.errorf("the filter's address is %q, want ?event=clicked", got)
	}
	b.waitFor("the clicked message alone", `document.querySelectorAll("#message-list a.message-link").length === 1`)
	if got := b.text("#message-list a.message-link"); got != "Tracked receipt" {
		b.errorf("?event=clicked lists %q", got)
	}
	if got := evalJS[string](b, `document.querySelector("select[name=event]").value`); got != "clicked" {
		b.errorf("the filter reads %q after loading ?event=clicked", got)
	}

	b.step("looking at a tracked message counts as no one's open or click")
	r := node.client.Do(apitest.Request{Method: "POST", Path: "/v1/send", Key: key, Body: map[string]any{
		"from": "orders@shop.example", "to": []string{"carl@example.net", "dave@example.net"}, "subject": "Shipped",
		"html": `<p><a href="https://shop.example/o?id=7&amp;x=2#top">Your order</a> <img src="https://shop.example/logo.png" alt="logo"></p>`}})
	if r.Status != 200 {
		t.Fatalf("send: %d %s", r.Status, r.Body)
	}
	shipped := r.Str("messageId")
	carlsCopy, _ := htmlAndText(t, w.copiesOf(t, shipped, 2)["carl@example.net"])
	pixel, clicks := trackingPaths(carlsCopy, "/t/o/"), trackingPaths(carlsCopy, "/t/c/")
	if len(pixel) != 1 || len(clicks) != 1 {
		t.Fatalf("carl's copy: pixels %q, clicks %q", pixel, clicks)
	}
	// A message whose own html holds carl's tracking addresses, in forms
	// the service's router takes: its preview must load none of them
	// either. It is not tracked itself, so the preview's cleaning alone
	// stands between the page and those addresses.
	otk, ctk := strings.TrimPrefix(pixel[0], "/t/o/"), strings.TrimPrefix(clicks[0], "/t/c/")
	r = node.client.Do(apitest.Request{Method: "POST", Path: "/v1/send", Key: key, Body: map[string]any{
		"from": "orders@shop.example", "to": "erin@example.net", "subject": "Forwarded",
		"html": `<p>Fwd: <img src="` + node.base + `/t/%6f/` + otk + `"><img src="` + node.base + `/t/o/` + otk + `?z">` +
			`<img src="` + node.base + `/t/c/` + ctk + `"><a href="` + node.base + `/t/c/` + ctk + `">theirs</a>` +
			`<a href="https://shop.example/mine">mine</a></p>`, "tracking": map[string]any{"opens": false, "clicks": false}}})
	if r.Status != 200 {
		t.Fatalf("send: %d %s", r.Status, r.Body)
	}
	forwarded := r.Str("messageId")
	w.copiesOf(t, forwarded, 1)
	b.navigate("/messages/" + forwarded)
	b.waitLoaded("#html-preview")
	evalJS[int](b, `(document.querySelector("#panel-html .preview-bar button").click(), 1)`)
	b.waitFor("remote images on", `document.querySelector("#panel-html .preview-bar button").textContent === "Block remote images"`)
	b.waitFrameIdle("#html-preview")
	if got := evalJS[string](b, `document.querySelector("#html-preview").srcdoc`); strings.Contains(got, otk) || strings.Contains(got, ctk) ||
		strings.Contains(got, "/t/o/") || strings.Contains(got, "/t/c/") || !strings.Contains(got, `href="https://shop.example/mine"`) {
		b.errorf("the preview keeps tracking addresses the mail held:\n%s", got)
	}

	b.navigate("/messages/" + shipped)
	b.waitLoaded("#html-preview")
	frame := func() string { return evalJS[string](b, `document.querySelector("#html-preview").srcdoc`) }
	if got := frame(); strings.Contains(got, "/t/o/") || strings.Contains(got, "/t/c/") || !strings.Contains(got, `href="https://shop.example/o?id=7&amp;x=2#top"`) {
		b.errorf("the preview of a tracked message shows its first recipient's tracking addresses, or not the link as written:\n%s", got)
	}
	evalJS[int](b, `(document.querySelector("#panel-html .preview-bar button").click(), 1)`)
	b.waitFor("remote images loaded", `document.querySelector("#html-preview").srcdoc.includes("logo.png")`)
	b.waitFrameIdle("#html-preview")
	if got := frame(); strings.Contains(got, "/t/o/") {
		b.errorf("loading remote images loads the first recipient's pixel:\n%s", got)
	}
	for _, u := range b.Requests() {
		if strings.Contains(u, "/t/o/") || strings.Contains(u, "/t/c/") {
			b.errorf("the page asked for a tracking address: %s", u)
		}
	}
	m := jsonMap(t, node.client.Do(apitest.Request{Method: "GET", Path: "/v1/messages/" + shipped, Key: key}))
	// carl's and dave's counts: neither page recorded anything.
	for _, rc := range m["recipients"].([]any) {
		rcpt := rc.(map[string]any)
		if rcpt["opens"] != float64(0) || rcpt["clicks"] != float64(0) {
			b.errorf("after the page was read, %s has %v opens and %v clicks", rcpt["address"], rcpt["opens"], rcpt["clicks"])
		}
	}
}
