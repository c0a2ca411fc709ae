package e2e

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/mailroom/mailroom/apitest"
	"github.com/mailroom/mailroom/poll"
	"github.com/mailroom/mailroom/webhook"
)

// adminHook is one request a webhook receiver got.
type adminHook struct {
	ID, Timestamp, Signature string
	Body                     []byte
}

// adminReceiver is an application's webhook endpoint: plain HTTP on
// loopback (serve --dev allows private targets), answering 200 with a small
// JSON body and keeping every request.
type adminReceiver struct {
	srv *httptest.Server
	mu  sync.Mutex
	got []adminHook
}

func startAdminReceiver(t *testing.T) *adminReceiver {
	r := &adminReceiver{}
	r.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		body, _ := io.ReadAll(req.Body)
		r.mu.Lock()
		r.got = append(r.got, adminHook{
			ID: req.Header.Get("webhook-id"), Timestamp: req.Header.Get("webhook-timestamp"),
			Signature: req.Header.Get("webhook-signature"), Body: body,
		})
		r.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"received":true,"by":"e2e receiver"}`)
	}))
	t.Cleanup(r.srv.Close)
	return r
}

func (r *adminReceiver) requests() []adminHook {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]adminHook(nil), r.got...)
}

// waitFor waits until the receiver holds n requests and returns them.
func (r *adminReceiver) waitFor(t *testing.T, n int) []adminHook {
	t.Helper()
	var got []adminHook
	if !poll.Within(waitTimeout, func() bool { got = r.requests(); return len(got) >= n }) {
		t.Fatalf("the receiver got %d requests in %v, want %d", len(got), waitTimeout, n)
	}
	return got
}

// verify checks h's signature with secret, as a Standard Webhooks consumer does.
func (h adminHook) verify(secret string) error {
	key, err := webhook.ParseSecret(secret)
	if err != nil {
		return err
	}
	return webhook.Verify(key, h.ID, h.Timestamp, h.Signature, h.Body, time.Now())
}

// The webhooks, suppressions and API keys pages, as an administrator uses
// them: add an endpoint whose secret is shown once and signs what a real
// receiver gets, send it a test event and replay it, watch the deliveries
// refresh without losing focus, rotate the secret, disable and enable it;
// suppress an address, look it up and remove it; create a send-only key,
// see it once, use it, revoke it. On a desktop and on a phone, nothing
// scrolls sideways and the console stays clean.
func TestDashboardWebhooksSuppressionsKeys(t *testing.T) {
	browserOrSkip(t)
	s := startServer(t, filepath.Join(t.TempDir(), "mailroom-data"), "--dev")
	recv := startAdminReceiver(t)
	hookURL := recv.srv.URL + "/hooks/mailroom"
	devKeyID := strings.Split(s.devKey, "_")[1]

	axe := adminAxe(t)
	b := newBrowser(t, s)
	b.step("signing in")
	b.navigate("/")
	b.signIn(s.devKey)
	b.waitVisible(mainNav)
	b.waitLoaded("")

	// ---- Webhooks ----
	b.step("the empty webhooks page")
	b.clickAndWait(mainNav+` a[href="/webhooks"]`, "/webhooks", ".hook-empty")
	if got := b.text(".hook-empty"); !strings.Contains(got, "Standard Webhooks") || !strings.Contains(got, "whsec_") {
		b.errorf("the empty webhooks page does not explain signing: %q", got)
	}
	adminShot(b, "webhooks-empty")
	adminAudit(b, axe, "the empty webhooks page")

	b.step("adding an endpoint")
	b.do("opening the add dialog", chromedp.Click(chromedp.CSS("#add-endpoint")))
	b.waitVisible(`dialog[open] input[name="url"]`)
	b.do("filling in the endpoint",
		chromedp.SendKeys(chromedp.CSS(`dialog[open] input[name="url"]`), hookURL),
		chromedp.SendKeys(chromedp.CSS(`dialog[open] input[name="description"]`), "Orders app <b>staging</b>"),
		chromedp.Click(chromedp.CSS(`dialog[open] input[type="radio"][value="some"]`)),
	)
	b.waitVisible(`dialog[open] input[value="email.delivered"]`)
	b.do("choosing events",
		chromedp.Click(chromedp.CSS(`dialog[open] input[value="email.delivered"]`)),
		chromedp.Click(chromedp.CSS(`dialog[open] input[value="email.bounced"]`)),
	)
	adminShot(b, "webhook-add-dialog")
	adminAudit(b, axe, "the add-endpoint dialog")
	b.do("submitting", chromedp.Click(chromedp.CSS(`dialog[open] button[type="submit"]`)))
	b.waitVisible(`dialog[open] .secret-value`)
	secret := b.textContent(`dialog[open] .secret-value`)
	if !regexp.MustCompile(`^whsec_[A-Za-z0-9+/]{43}=$`).MatchString(secret) {
		b.fatalf("the signing secret shown is %q, want whsec_ and 32 bytes in base64", secret)
	}
	adminShot(b, "webhook-secret-once")
	adminAudit(b, axe, "the signing secret dialog")
	b.do("closing the secret", chromedp.Click(chromedp.CSS(`dialog[open] .dialog-actions .btn-primary`)))
	b.waitFor("the endpoint's page", `location.pathname.startsWith("/webhooks/wh_") && document.querySelector("dialog[open]") === null`)
	b.waitLoaded("#deliveries-empty")
	id := strings.TrimPrefix(evalJS[string](b, `location.pathname`), "/webhooks/")
	if n := evalJS[bool](b, `document.documentElement.textContent.includes(`+jsString(secret)+`)`); n {
		b.errorf("the secret is still in the page after its dialog was closed")
	}
	if got := b.text("#hook-url"); got != hookURL {
		b.errorf("the endpoint's URL shows %q, want %q", got, hookURL)
	}
	if got := b.text("h1"); got != "Orders app <b>staging</b>" {
		b.errorf("the endpoint's heading is %q, want its description as text", got)
	}
	if got := b.text("main .facts"); !strings.Contains(got, "email.delivered") || !strings.Contains(got, "email.bounced") || !strings.Contains(got, "enabled") {
		b.errorf("the endpoint's facts lack its events or status: %q", got)
	}
	// The API agrees, and never shows the secret again.
	r := s.client.Do(apitest.Request{Method: "GET", Path: "/v1/webhooks/" + id, Key: s.devKey})
	if r.Status != 200 || strings.Contains(string(r.Body), "whsec_") {
		t.Fatalf("GET /v1/webhooks/%s: %d %s", id, r.Status, r.Body)
	}

	b.step("sending a test event")
	b.do("clicking Send test event", chromedp.Click(chromedp.CSS("#send-test")))
	b.waitFor("the toast", `document.querySelector("#toasts").textContent.includes("Test event evt_")`)
	got := recv.waitFor(t, 1)
	if err := got[0].verify(secret); err != nil {
		t.Errorf("the test delivery does not verify with the secret the dashboard showed: %v", err)
	}
	var body struct{ Type string }
	_ = json.Unmarshal(got[0].Body, &body)
	if body.Type != "webhook.test" {
		t.Errorf("the receiver got a %q event, want webhook.test", body.Type)
	}
	b.waitFor("a delivery answered 200 in the list",
		`[...document.querySelectorAll("#deliveries tbody tr")].some((tr) => tr.querySelector(".hook-code")?.textContent.startsWith("200") && tr.textContent.includes(`+jsString(got[0].ID)+`))`)
	row := `#deliveries tbody tr:first-child`
	if got := b.text(row); !strings.Contains(got, "webhook.test") || !strings.Contains(got, "succeeded") || !strings.Contains(got, " ms") {
		b.errorf("the delivery row lacks its type, status or duration: %q", got)
	}
	b.do("opening the response body", chromedp.Click(chromedp.CSS(row+" details summary")))
	if got := b.text(row + " details pre"); !strings.Contains(got, `"by":"e2e receiver"`) {
		b.errorf("the response body shows %q", got)
	}
	adminShot(b, "webhook-delivered")
	adminAudit(b, axe, "the endpoint with a delivery, its response open")

	b.step("the deliveries refresh without taking focus")
	evalJS[int](b, `(() => { const btn = document.querySelector("#deliveries tbody tr:first-child button"); btn.dataset.e2e = "focused"; btn.focus(); return 1; })()`)
	deliveriesRequests := func() int {
		n := 0
		for _, u := range b.Requests() {
			if strings.Contains(u, "/v1/webhooks/"+id+"/deliveries") {
				n++
			}
		}
		return n
	}
	before := deliveriesRequests()
	// Two more requests: the first one's answer is drawn before the second is made.
	b.waitRecorded("two more refreshes of the deliveries", func() bool { return deliveriesRequests() >= before+2 })
	if !evalJS[bool](b, `document.activeElement && document.activeElement.dataset.e2e === "focused"`) {
		b.errorf("a refresh of the deliveries moved the focus to %s", evalJS[string](b, `document.activeElement ? document.activeElement.outerHTML.slice(0, 200) : "nothing"`))
	}
	if !evalJS[bool](b, `document.querySelector("#deliveries tbody tr:first-child details").open`) {
		b.errorf("a refresh of the deliveries closed the open response body")
	}

	b.step("replaying the event")
	b.do("clicking Replay", chromedp.Click(chromedp.CSS(row+" button")))
	b.waitFor("the replay toast", `document.querySelector("#toasts").textContent.includes("queued again")`)
	got = recv.waitFor(t, 2)
	if got[1].ID != got[0].ID {
		t.Errorf("the replay carried webhook-id %q, want the event's %q", got[1].ID, got[0].ID)
	}
	b.waitFor("the replay's delivery in the list", `document.querySelectorAll("#deliveries tbody tr").length === 2`)
	// One Replay button per event: the older attempt of it offers none.
	if n := b.count("#deliveries tbody tr button"); n != 1 {
		b.errorf("%d Replay buttons for one event", n)
	}

	b.step("rotating the secret")
	b.do("clicking Rotate secret", chromedp.Click(chromedp.CSS("#rotate-secret")))
	b.waitVisible(`dialog[open]`)
	if got := b.text(`dialog[open]`); !strings.Contains(got, "24 hours") {
		b.errorf("the rotate confirmation does not say the old secret keeps signing for 24 hours: %q", got)
	}
	b.do("confirming", chromedp.Click(chromedp.CSS(`dialog[open] .dialog-actions .btn-primary`)))
	b.waitVisible(`dialog[open] .secret-value`)
	newSecret := b.textContent(`dialog[open] .secret-value`)
	if !strings.HasPrefix(newSecret, "whsec_") || newSecret == secret {
		b.fatalf("the rotated secret is %q (the old one %q)", newSecret, secret)
	}
	if got := b.text(`dialog[open]`); !strings.Contains(got, "old secret keeps signing") {
		b.errorf("the new secret's dialog does not say the old one keeps signing: %q", got)
	}
	adminShot(b, "webhook-rotated-secret")
	b.do("closing the secret", chromedp.Click(chromedp.CSS(`dialog[open] .dialog-actions .btn-primary`)))
	b.waitVisible("#hook-rotation")
	if evalJS[bool](b, `document.documentElement.textContent.includes(`+jsString(newSecret)+`)`) {
		b.errorf("the new secret is still in the page after its dialog was closed")
	}
	b.do("sending another test event", chromedp.Click(chromedp.CSS("#send-test")))
	got = recv.waitFor(t, 3)
	if err := got[2].verify(newSecret); err != nil {
		t.Errorf("after rotating, a delivery does not verify with the new secret: %v", err)
	}
	if err := got[2].verify(secret); err != nil {
		t.Errorf("within 24 h of rotating, a delivery does not verify with the old secret: %v", err)
	}
	b.waitFor("the third delivery in the list", `document.querySelectorAll("#deliveries tbody tr").length === 3`)

	b.step("disabling and enabling the endpoint")
	b.do("clicking Disable", chromedp.Click(chromedp.CSS("#toggle-endpoint")))
	b.waitVisible(`dialog[open] .btn-danger`)
	b.do("confirming", chromedp.Click(chromedp.CSS(`dialog[open] .btn-danger`)))
	b.waitVisible("main .alert-warn")
	if got := b.text("main .facts"); !strings.Contains(got, "disabled") {
		b.errorf("after disabling, the facts say %q", got)
	}
	if b.count("#send-test") != 0 {
		b.errorf("a disabled endpoint offers Send test event")
	}
	if n := b.count("#deliveries button"); n != 0 {
		b.errorf("a disabled endpoint offers %d Replay buttons", n)
	}
	adminShot(b, "webhook-disabled")
	adminAudit(b, axe, "a disabled endpoint")
	b.do("clicking Enable", chromedp.Click(chromedp.CSS("#toggle-endpoint")))
	b.waitVisible("#send-test")
	if b.count("main .alert-warn") != 0 {
		b.errorf("the endpoint enabled again still shows the disabled warning")
	}
	b.waitVisible("#deliveries tbody tr button")

	b.step("the endpoints list")
	b.clickAndWait(`a.back-link[href="/webhooks"]`, "/webhooks", "a.webhook-link")
	if got := b.text("#webhooks"); !strings.Contains(got, hookURL) || !strings.Contains(got, "Orders app <b>staging</b>") ||
		!strings.Contains(got, "email.delivered") || !strings.Contains(got, "enabled") {
		b.errorf("the endpoints list shows %q", got)
	}
	if href := evalJS[string](b, `document.querySelector("a.webhook-link").getAttribute("href")`); href != "/webhooks/"+id {
		b.errorf("the endpoint's link goes to %q", href)
	}
	adminShot(b, "webhooks-list")
	adminAudit(b, axe, "the endpoints list")

	// ---- Suppressions ----
	b.step("the empty suppressions page")
	b.clickAndWait(mainNav+` a[href="/suppressions"]`, "/suppressions", "#suppressions-empty")
	b.step("suppressing an address")
	b.do("opening the add dialog", chromedp.Click(chromedp.CSS("#add-suppression")))
	b.waitVisible(`dialog[open] input[name="address"]`)
	b.do("adding the address",
		chromedp.SendKeys(chromedp.CSS(`dialog[open] input[name="address"]`), "Gone.User@Example.com"),
		chromedp.Click(chromedp.CSS(`dialog[open] button[type="submit"]`)),
	)
	b.waitVisible("#suppressions .suppressed-address")
	if got := b.text("#suppressions"); !strings.Contains(got, "gone.user@example.com") || !strings.Contains(got, "manual") {
		b.errorf("the suppressions list shows %q", got)
	}
	if r := s.client.Do(apitest.Request{Method: "GET", Path: "/v1/suppressions/gone.user@example.com", Key: s.devKey}); r.Status != 200 || r.Str("reason") != "manual" {
		t.Errorf("GET the suppressed address: %d %s", r.Status, r.Body)
	}
	b.step("looking the address up")
	b.do("searching",
		chromedp.SendKeys(chromedp.CSS("#suppression-search"), "gone.user@example.com"),
		chromedp.Click(chromedp.CSS(`form.supp-search button[type="submit"]`)),
	)
	b.waitVisible(".supp-found")
	if got := b.text(".supp-found"); !strings.Contains(got, "gone.user@example.com is suppressed") || !strings.Contains(got, "Stops all mail") {
		b.errorf("the lookup shows %q", got)
	}
	adminShot(b, "suppressions")
	adminAudit(b, axe, "a suppression looked up")
	b.step("removing the address")
	b.do("clicking Remove", chromedp.Click(chromedp.CSS(`#suppressions button[aria-label="Remove gone.user@example.com"]`)))
	b.waitVisible(`dialog[open] .btn-danger`)
	b.do("confirming", chromedp.Click(chromedp.CSS(`dialog[open] .btn-danger`)))
	b.waitVisible("#suppressions-empty")
	if b.count(".supp-found") != 0 {
		b.errorf("the lookup still shows the removed address")
	}
	b.waitFor("the removal toast", `document.querySelector("#toasts").textContent.includes("receives mail again")`)
	if r := s.client.Do(apitest.Request{Method: "GET", Path: "/v1/suppressions/gone.user@example.com", Key: s.devKey}); r.Status != 404 {
		t.Errorf("after removing, GET the address: %d %s", r.Status, r.Body)
	}

	// ---- API keys ----
	b.step("the API keys page")
	b.clickAndWait(mainNav+` a[href="/api-keys"]`, "/api-keys", "#api-keys")
	if got := evalJS[string](b, `(() => { const tr = document.querySelector("#api-keys .key-this")?.closest("tr"); return tr ? tr.querySelector(".key-id").textContent : ""; })()`); got != devKeyID {
		b.errorf("the key marked “this session” is %q, want the dev key %q", got, devKeyID)
	}
	b.step("creating a send-only key")
	b.do("opening the create dialog", chromedp.Click(chromedp.CSS("#create-key")))
	b.waitVisible(`dialog[open] input[name="name"]`)
	if got := evalJS[[]string](b, `[...document.querySelectorAll('dialog[open] input[name="scopes"]:checked')].map((c) => c.value)`); len(got) != 1 || got[0] != "send" {
		b.errorf("the scopes checked at first: %q, want just send", got)
	}
	b.do("naming the key", chromedp.SendKeys(chromedp.CSS(`dialog[open] input[name="name"]`), "deploys"))
	adminShot(b, "key-create-dialog")
	adminAudit(b, axe, "the create-key dialog")
	b.do("creating it", chromedp.Click(chromedp.CSS(`dialog[open] button[type="submit"]`)))
	b.waitVisible(`dialog[open] .secret-value`)
	key := b.textContent(`dialog[open] .secret-value`)
	m := regexp.MustCompile(`^mailroom_([a-z0-9]{16})_[0-9A-Za-z]{43}$`).FindStringSubmatch(key)
	if m == nil {
		b.fatalf("the new key shown is %q", key)
	}
	keyID := m[1]
	adminShot(b, "key-once")
	b.do("closing the key", chromedp.Click(chromedp.CSS(`dialog[open] .dialog-actions .btn-primary`)))
	keyRow := `(() => [...document.querySelectorAll("#api-keys tbody tr")].find((tr) => tr.querySelector(".key-id")?.textContent === ` + jsString(keyID) + `))()`
	b.waitFor("the new key in the list", keyRow+` !== undefined`)
	if evalJS[bool](b, `document.documentElement.textContent.includes(`+jsString(key)+`)`) {
		b.errorf("the key is still in the page after its dialog was closed")
	}
	if got := evalJS[string](b, keyRow+`.innerText`); !strings.Contains(got, "deploys") || !strings.Contains(got, "send") ||
		!strings.Contains(got, "active") || strings.Contains(got, "domains") {
		b.errorf("the new key's row shows %q", got)
	}
	r = s.client.Do(apitest.Request{Method: "GET", Path: "/v1/api-keys/current", Key: key})
	if r.Status != 200 || r.Str("keyId") != keyID {
		t.Errorf("the key the dashboard showed does not work: %d %s", r.Status, r.Body)
	}
	adminShot(b, "keys")
	adminAudit(b, axe, "the keys list")
	b.step("revoking it")
	b.do("clicking Revoke", chromedp.Click(chromedp.CSS(`#api-keys button[aria-label="Revoke deploys (`+keyID+`)"]`)))
	b.waitVisible(`dialog[open] .btn-danger`)
	if got := b.text(`dialog[open]`); strings.Contains(got, "sign") {
		b.errorf("revoking another key warns about signing out: %q", got)
	}
	b.do("confirming", chromedp.Click(chromedp.CSS(`dialog[open] .btn-danger`)))
	b.waitFor("the key shown revoked", keyRow+`?.querySelector(".badge")?.textContent === "revoked"`)
	if n := evalJS[int](b, keyRow+`.querySelectorAll("button").length`); n != 0 {
		b.errorf("a revoked key still offers %d buttons", n)
	}
	r = s.client.Do(apitest.Request{Method: "GET", Path: "/v1/api-keys/current", Key: key})
	if r.Status != 401 || r.Code() != "api_key_revoked" {
		t.Errorf("the revoked key: %d %s", r.Status, r.Body)
	}
	// The warning for this session's own key is a different one.
	b.do("clicking Revoke on this session's key", chromedp.Click(chromedp.CSS(`#api-keys button[aria-label$="(`+devKeyID+`)"]`)))
	b.waitVisible(`dialog[open] .btn-danger`)
	if got := b.text(`dialog[open]`); !strings.Contains(got, "signs you out") {
		b.errorf("revoking this session's key does not warn about signing out: %q", got)
	}
	adminShot(b, "key-revoke-own-warning")
	b.do("canceling", chromedp.Click(chromedp.CSS(`dialog[open] .btn-secondary`)))
	b.waitFor("the dialog to close", `document.querySelector("dialog[open]") === null`)

	// ---- On a phone ----
	s.client.Do(apitest.Request{Method: "POST", Path: "/v1/suppressions", Key: s.devKey, Body: map[string]any{
		"address": "a.very.long.address.that.should.wrap.somewhere@subdomain.of.a.long.example.com"}})
	b.setViewport(390, 844, true)
	for _, p := range []struct{ path, ready, name string }{
		{"/webhooks", "a.webhook-link", "phone-webhooks"},
		{"/webhooks/" + id, "#deliveries tbody tr", "phone-webhook"},
		{"/suppressions", "#suppressions", "phone-suppressions"},
		{"/api-keys", "#api-keys", "phone-keys"},
	} {
		b.step("on a phone: " + p.path)
		b.navigate(p.path)
		b.waitLoaded(p.ready)
		if p.path == "/webhooks/"+id {
			b.do("opening a response body", chromedp.Click(chromedp.CSS(`#deliveries tbody tr:first-child details summary`)))
		}
		if got := b.sideways(390); got != "" {
			b.errorf("%s scrolls sideways: %s", p.path, got)
		}
		adminShot(b, p.name)
		adminAudit(b, axe, p.name)
	}
	b.step("on a phone: the add-endpoint dialog")
	b.navigate("/webhooks")
	b.waitLoaded("#add-endpoint")
	b.do("opening the add dialog", chromedp.Click(chromedp.CSS("#add-endpoint")))
	b.waitVisible(`dialog[open] input[name="url"]`)
	b.do("choosing events one by one", chromedp.Click(chromedp.CSS(`dialog[open] input[type="radio"][value="some"]`)))
	b.waitVisible(`dialog[open] input[value="email.delivered"]`)
	if got := b.sideways(390); got != "" {
		b.errorf("the add-endpoint dialog scrolls sideways: %s", got)
	}
	adminShot(b, "phone-webhook-add-dialog")
	adminAudit(b, axe, "the add-endpoint dialog on a phone")

	b.step("the console")
	b.noDialog()
	if errs := b.ConsoleErrors(); len(errs) != 0 {
		t.Errorf("console errors:\n%s", fmtEntries(errs))
	}
}

// adminShot takes a screenshot of the page scrolled to the top, without the
// toasts of earlier steps, which would cover what it is taken for.
func adminShot(b *browser, name string) {
	b.t.Helper()
	evalJS[int](b, `(() => { document.querySelectorAll("#toasts .toast").forEach((t) => t.remove()); window.scrollTo(0, 0); return 1; })()`)
	b.screenshot(name)
}

// adminAxe is axe-core's source when it is installed (see axeOrSkip), or "":
// the flows above are worth running without it.
func adminAxe(t *testing.T) string {
	path := os.Getenv("MAILROOM_AXE_JS")
	if path == "" {
		path = axeScript
	}
	src, err := os.ReadFile(path)
	if err != nil {
		t.Logf("axe-core is not installed (%v): the pages are not audited", err)
		return ""
	}
	return string(src)
}

// adminAudit runs axe-core's WCAG rules on the page as it stands, dialogs
// and open details included, when axe-core is installed.
func adminAudit(b *browser, axe, what string) {
	b.t.Helper()
	if axe != "" {
		b.audit(axe, what)
	}
}
