package e2e

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"github.com/mailroom/mailroom"
	"github.com/mailroom/mailroom/apitest"
	"github.com/mailroom/mailroom/sqlite"
)

// The dashboard's Received page as someone reading their inbound mail
// meets it: the list with each message's verdicts, one message with its
// checks, its html in the sandboxed preview where the sender's script
// never runs, and its attachments downloaded through the API as files,
// never opened. The message is stored beside the running server, as the
// inbound MX stores it (the MX itself has tests of its own).
func TestDashboardReceived(t *testing.T) {
	browserOrSkip(t)
	dataDir := filepath.Join(t.TempDir(), "mailroom-data")
	s := startServer(t, dataDir, "--dev")
	r := s.client.Do(apitest.Request{Method: "GET", Path: "/v1/api-keys/current", Key: s.devKey})
	keyID := r.Str("keyId")

	ctx := context.Background()
	store, err := sqlite.OpenExisting(ctx, dataDir)
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	key, err := store.APIKey(ctx, keyID)
	if err != nil {
		t.Fatal(err)
	}
	page := []byte(`<script>parent.postMessage("attachment ran", "*")</script>`)
	raw := []byte("From: Ann <ann@sender.example>\r\nSubject: Intake 42\r\n\r\nhello\r\n")
	m := &mailroom.ReceivedMessage{
		ID: mailroom.NewID(mailroom.PrefixReceived, time.Now()), AccountID: key.AccountID,
		MailFrom: "bounce@sender.example", Recipients: []string{"intake+42@in.example.com"},
		From: "Ann <ann@sender.example>", To: []string{"intake@in.example.com"}, Subject: "Intake 42", MessageID: "<42@sender.example>",
		RemoteIP: "192.0.2.7", Helo: "mail.sender.example", ReceivedAt: time.Now().UTC(),
		Authentication: mailroom.ReceivedAuthentication{SPF: mailroom.AuthPass, DKIM: mailroom.AuthFail, DMARC: mailroom.AuthFail,
			DKIMSignatures: []mailroom.DKIMSignatureResult{{Domain: "sender.example", Selector: "s1", Result: mailroom.AuthFail}}},
		Headers:     []mailroom.ReceivedHeader{{Name: "From", Value: "Ann <ann@sender.example>"}, {Name: "Subject", Value: "Intake 42"}},
		Text:        "hello\n",
		HTML:        `<p id="said">Hello from the sender</p><script>document.getElementById("said").textContent = "script ran"; parent.postMessage("mail ran", "*")</script>`,
		Attachments: []mailroom.ReceivedAttachment{{ID: "att_1", Filename: "form.html", ContentType: "text/html", Size: int64(len(page)), Content: page}},
		Raw:         raw, Size: int64(len(raw)),
	}
	ev, err := mailroom.NewEvent(key.AccountID, mailroom.EventEmailReceived, mailroom.ReceivedEventData{ReceivedID: m.ID}, m.ReceivedAt)
	if err != nil {
		t.Fatal(err)
	}
	if err := store.SaveReceived(ctx, []*mailroom.ReceivedMessage{m}, []*mailroom.Event{ev}); err != nil {
		t.Fatal(err)
	}

	b := newBrowser(t, s)
	b.navigate("/")
	b.signIn(s.devKey)
	b.waitLoaded(mainNav)
	evalJS[int](b, `(window.__ran = [], addEventListener("message", (e) => window.__ran.push(String(e.data))), 1)`)
	b.clickAndWait(mainNav+` a[href="/received"]`, "/received", "table#received")
	row := b.text("table#received tbody tr")
	for _, want := range []string{"Intake 42", "ann@sender.example", "intake+42@in.example.com", "SPF pass", "DKIM fail", "DMARC fail"} {
		if !strings.Contains(row, want) {
			b.errorf("the list's row %q lacks %q", row, want)
		}
	}

	b.clickAndWait(`table#received a[href="/received/`+m.ID+`"]`, "/received/"+m.ID, "iframe#html-preview")
	if got := b.text("#checks"); !strings.Contains(got, "SPF pass") || !strings.Contains(got, "DMARC fail") || !strings.Contains(got, "sender.example") {
		b.errorf("the checks read %q", got)
	}
	if got := b.text("#recipients"); got != "intake+42@in.example.com" {
		b.errorf("delivered to %q", got)
	}
	b.waitFrameIdle("iframe#html-preview")
	if got := b.frameText("iframe#html-preview"); !strings.Contains(got, "Hello from the sender") {
		b.errorf("the preview shows %q: the sender's script ran, or the html is missing", got)
	}
	if sb := evalJS[string](b, `document.querySelector("iframe#html-preview").getAttribute("sandbox")`); strings.Contains(sb, "allow-scripts") || strings.Contains(sb, "allow-same-origin") {
		b.errorf("the preview's sandbox is %q", sb)
	}

	// The content's tabs follow the keyboard (WAI-ARIA tabs): the arrows
	// move to the next or previous tab, round the ends, Home and End to
	// the first and last; the tab moved to is focused, selected and its
	// panel alone shown.
	b.do("focusing the HTML tab", chromedp.Focus("#tab-html"))
	for _, k := range []struct{ name, key, want string }{
		{"ArrowRight", kb.ArrowRight, "text"}, {"End", kb.End, "raw"}, {"ArrowRight", kb.ArrowRight, "html"},
		{"ArrowLeft", kb.ArrowLeft, "raw"}, {"Home", kb.Home, "html"},
	} {
		b.do("pressing a key on the tabs", chromedp.KeyEvent(k.key))
		got := evalJS[string](b, `(() => { const a = document.activeElement;
			const shown = [...document.querySelectorAll('[role="tabpanel"]')].filter((p) => !p.hidden).map((p) => p.id);
			return a.id + " " + a.getAttribute("aria-selected") + " " + shown.join(","); })()`)
		if want := "tab-" + k.want + " true panel-" + k.want; got != want {
			b.errorf("after %s on the tabs: %q, want %q", k.name, got, want)
		}
	}

	// Focus scrolled back into view lands below the sticky header, not
	// under it (WCAG 2.2, 2.4.11), on a window short enough to scroll.
	b.setViewport(900, 360, false)
	gap := evalJS[float64](b, `(() => { document.activeElement.blur(); window.scrollTo(0, document.documentElement.scrollHeight);
		const tab = document.querySelector("#tab-html"); tab.focus();
		return tab.getBoundingClientRect().top - document.querySelector(".topbar").getBoundingClientRect().bottom; })()`)
	if gap < 0 {
		b.errorf("the focused tab is %.0f px under the sticky header", -gap)
	}
	b.setViewport(1280, 900, false)

	// The attachment is saved, not shown: a Blob of octet-stream under
	// its name, read with the key. (The page's policy lets it fetch no
	// blob: URL, so the Blob is kept as it is made.)
	evalJS[int](b, `(() => { window.__saved = []; const blobs = new Map(); const make = URL.createObjectURL;
		URL.createObjectURL = (blob) => { const u = make(blob); blobs.set(u, blob); return u; };
		HTMLAnchorElement.prototype.click = function () { window.__saved.push({name: this.download, href: this.href, blob: blobs.get(this.href)}); };
		return 1; })()`)
	b.do("opening the attachments tab", chromedp.Click(chromedp.CSS("#tab-attachments")))
	b.do("clicking Download", chromedp.Click(chromedp.CSS(`button[data-attachment="att_1"]`)))
	b.waitFor("the download", `window.__saved.length === 1`)
	type saved struct{ Name, Href, Type, Text string }
	got := evalJS[saved](b, `(async () => { const s = window.__saved[0];
		return {Name: s.name, Href: s.href, Type: s.blob ? s.blob.type : "", Text: s.blob ? await s.blob.text() : ""}; })()`)
	if got.Name != "form.html" || !strings.HasPrefix(got.Href, "blob:") || got.Type != "application/octet-stream" || got.Text != string(page) {
		b.errorf("the download: %+v", got)
	}
	if ran := evalJS[[]string](b, `window.__ran`); len(ran) != 0 {
		b.errorf("the sender's scripts ran: %q", ran)
	}
	if off := b.OffOrigin(); len(off) != 0 {
		b.errorf("requests left the service: %q", off)
	}
}
