package e2e

import (
	"bytes"
	"crypto/tls"
	"encoding/json"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/emersion/go-message"

	"github.com/mailroom/mailroom/apitest"
	"github.com/mailroom/mailroom/poll"
	"github.com/mailroom/mailroom/storetest"
)

// trackedHTML is the HTML of the tracked sends: links with a query and an
// escaped ampersand, a fragment, Unicode in host and path, and a mailto:
// that must stay as it is.
const trackedHTML = `<html><body><p>Your order shipped.</p>` +
	`<a href="https://shop.example/orders/42?x=1&amp;y=2#details">Track it</a> ` +
	`<a href="https://bücher.example/straße?q=ä">Books</a> ` +
	`<a href="mailto:help@shop.example">Write to us</a></body></html>`

// The links a reader's browser goes to.
const (
	orderLink = "https://shop.example/orders/42?x=1&y=2#details"
	booksLink = "https://bücher.example/straße?q=ä"
)

// What a new user sees of engagement tracking, with the real binary on
// each engine: with the domain's tracking off nothing is rewritten; once
// turned on, each recipient's copy carries its own pixel and links and
// still verifies with dkimpy against the published key; a click goes
// exactly where the link pointed and shows on the timeline, in
// /v1/events and at a webhook, with the client's address truncated; a
// changed token is a 404, never a redirect; a HEAD or a known scanner is
// marked machine, as is a click within 10 s of delivery; the pixel always
// answers an image; and a send that turns tracking off is untouched.
func TestTrackingAsAUserSeesIt(t *testing.T) {
	requireDKIMpyWithNaCl(t)
	storetest.Each(t, func(t *testing.T, eng storetest.Engine) {
		h := startHookReceiver(t)
		w := newWorld(t)
		node, key, _ := w.startAcmeNode(t, eng, "--webhooks-allow-private")
		c := node.client
		createHook(t, c, key, h, "/engagement", "email.opened", "email.clicked")

		// Off by default: the domain says so, and nothing is rewritten.
		d := jsonMap(t, c.Do(apitest.Request{Method: "GET", Path: "/v1/domains/shop.example", Key: key}))
		if d["openTracking"] != false || d["clickTracking"] != false {
			t.Fatalf("a new domain tracks: openTracking %v, clickTracking %v", d["openTracking"], d["clickTracking"])
		}
		plain := sendTracked(t, c, key, nil)
		for _, copy := range w.copiesOf(t, plain, 2) {
			html, _ := htmlAndText(t, copy)
			if strings.Contains(html, "/t/c/") || strings.Contains(html, "/t/o/") || !strings.Contains(html, `href="https://shop.example/orders/42?x=1&amp;y=2#details"`) {
				t.Fatalf("untracked mail was rewritten:\n%s", html)
			}
		}

		d = jsonMap(t, c.Do(apitest.Request{Method: "PATCH", Path: "/v1/domains/shop.example", Key: key,
			Body: map[string]any{"openTracking": true, "clickTracking": true}}))
		if d["openTracking"] != true || d["clickTracking"] != true {
			t.Fatalf("after PATCH: openTracking %v, clickTracking %v", d["openTracking"], d["clickTracking"])
		}

		// Tracked: a copy of its own for each recipient, each verified.
		tracked := sendTracked(t, c, key, nil)
		copies := w.copiesOf(t, tracked, 2)
		links := map[string][]string{}
		pixels := map[string]string{}
		for rcpt, raw := range copies {
			if ok, verdicts := w.dkimpyVerdicts(t, raw); !ok {
				t.Errorf("%s's tracked copy does not verify with dkimpy: %q", rcpt, verdicts)
			}
			html, text := htmlAndText(t, raw)
			links[rcpt] = trackingPaths(html, "/t/c/")
			pixel := trackingPaths(html, "/t/o/")
			if len(links[rcpt]) != 2 || len(pixel) != 1 {
				t.Fatalf("%s's copy: click links %q, pixels %q in\n%s", rcpt, links[rcpt], pixel, html)
			}
			pixels[rcpt] = pixel[0]
			if !strings.Contains(html, `href="mailto:help@shop.example"`) {
				t.Errorf("%s's copy: the mailto: link was rewritten:\n%s", rcpt, html)
			}
			if strings.Contains(text, "/t/c/") || strings.Contains(text, "/t/o/") {
				t.Errorf("%s's copy: the text part was rewritten:\n%s", rcpt, text)
			}
			if i, j := strings.Index(html, "/t/o/"), strings.LastIndex(html, "<"); i < 0 || !strings.Contains(html[strings.LastIndex(html[:i], "<"):], "</body>") || j < i {
				t.Errorf("%s's copy: the pixel is not the body's last element:\n%s", rcpt, html)
			}
		}
		ann, bob := "ann@example.net", "bob@example.net"
		if links[ann][0] == links[bob][0] || pixels[ann] == pixels[bob] {
			t.Fatalf("two recipients share tokens: %q %q", links, pixels)
		}

		// A scanner follows the link at once: redirected, marked machine.
		get := noRedirects(node)
		r := get(t, "HEAD", links[ann][0], "Mozilla/5.0")
		if r.StatusCode != 302 || r.Header.Get("Location") != orderLink {
			t.Fatalf("HEAD of a click link: %d to %q, want 302 to %q", r.StatusCode, r.Header.Get("Location"), orderLink)
		}
		scan := h.waitFor(t, "/engagement", 30*time.Second, "the scanner's click arrives", func(q hookRequest) bool { return q.Type == "email.clicked" })
		if !scan.Verified || scan.Data["machine"] != true || scan.Data["url"] != orderLink || scan.Data["recipient"] != ann || scan.Data["messageId"] != tracked {
			t.Fatalf("the scanner's click: %+v", scan)
		}

		// A changed token is a 404, and writes nothing.
		forged := flipTokenChar(links[ann][1])
		if r := get(t, "GET", forged, "Mozilla/5.0 (X11; Linux x86_64) Firefox/140.0"); r.StatusCode != 404 || r.Header.Get("Location") != "" {
			t.Fatalf("a changed token: %d Location %q, want 404 and no redirect", r.StatusCode, r.Header.Get("Location"))
		}
		// Another recipient's token stays its own: bob's link names bob.
		// The pixel answers an image whatever comes.
		for _, p := range []string{pixels[bob], "/t/o/garbage", flipTokenChar(pixels[bob])} {
			r := get(t, "GET", p, "Mozilla/5.0 (X11; Linux x86_64) Firefox/140.0")
			if r.StatusCode != 200 || !strings.HasPrefix(r.Header.Get("Content-Type"), "image/") || !strings.Contains(r.Header.Get("Cache-Control"), "no-store") {
				t.Fatalf("pixel %s: %d %q %q", p, r.StatusCode, r.Header.Get("Content-Type"), r.Header.Get("Cache-Control"))
			}
		}
		open := h.waitFor(t, "/engagement", 30*time.Second, "bob's open arrives", func(q hookRequest) bool { return q.Type == "email.opened" })
		if open.Data["recipient"] != bob || open.Data["ip"] != "127.0.0.0" || open.Data["machine"] != false {
			t.Fatalf("bob's open: %+v", open.Data)
		}

		// A reader, later than 10 s after delivery: not machine, and
		// exactly where the link pointed, Unicode and all.
		deliveredAt := deliveredTime(t, c, key, tracked, ann)
		poll.Within(30*time.Second, func() bool { return time.Since(deliveredAt) > 11*time.Second })
		const firefox = "Mozilla/5.0 (X11; Linux x86_64; rv:140.0) Gecko/20100101 Firefox/140.0"
		if r := get(t, "GET", links[ann][1], firefox); r.StatusCode != 302 || r.Header.Get("Location") != booksLink {
			t.Fatalf("a reader's click: %d to %q, want 302 to %q", r.StatusCode, r.Header.Get("Location"), booksLink)
		}
		reader := h.waitFor(t, "/engagement", 30*time.Second, "the reader's click arrives", func(q hookRequest) bool {
			return q.Type == "email.clicked" && q.Data["url"] == booksLink
		})
		if reader.Data["machine"] != false || reader.Data["ip"] != "127.0.0.0" || reader.Data["userAgent"] != firefox {
			t.Fatalf("the reader's click: %+v", reader.Data)
		}
		if n := len(h.requests("/engagement")); n != 3 {
			t.Errorf("the endpoint got %d engagement events, want 3 (the forged click wrote none)", n)
		}

		// The timeline, /v1/events and the log's filter show them.
		m := jsonMap(t, c.Do(apitest.Request{Method: "GET", Path: "/v1/messages/" + tracked, Key: key}))
		var types []string
		for _, e := range m["events"].([]any) {
			types = append(types, e.(map[string]any)["type"].(string))
		}
		if !containsAll(types, "email.opened", "email.clicked") {
			t.Errorf("timeline %q lacks the opened and clicked events", types)
		}
		ev := jsonMap(t, c.Do(apitest.Request{Method: "GET", Path: "/v1/events?type=email.clicked&messageId=" + tracked, Key: key}))
		if n := len(ev["data"].([]any)); n != 2 {
			t.Errorf("/v1/events lists %d clicks, want 2", n)
		}
		for filter, want := range map[string]string{"clicked": tracked, "opened": tracked} {
			l := jsonMap(t, c.Do(apitest.Request{Method: "GET", Path: "/v1/messages?event=" + filter, Key: key}))
			var ids []string
			for _, x := range l["data"].([]any) {
				ids = append(ids, x.(map[string]any)["id"].(string))
			}
			if len(ids) != 1 || ids[0] != want {
				t.Errorf("?event=%s lists %q, want only %s", filter, ids, want)
			}
		}

		// The command line shows them too: the recipients' opens and
		// clicks, the links' clicks, and the log's filter.
		u, _ := url.Parse(node.base)
		env := []string{"MAILROOM_API_KEY=" + key, "MAILROOM_URL=https://localhost:" + u.Port(),
			"MAILROOM_CACERT=" + filepath.Join(node.dataDir, "tls", "cert.pem")}
		shown := cli(t, t.TempDir(), env, "messages", "get", tracked)
		for _, want := range []string{`(?m)^Tracking\s+opens, clicks$`, `(?m)^  CLICKS\s+URL$`, `(?m)^  1\s+` + regexp.QuoteMeta(booksLink) + `$`,
			`(?m)^  \S+\s+email\.clicked\s+ann@example\.net\s+` + regexp.QuoteMeta(booksLink) + ` \(127\.0\.0\.0 Mozilla`,
			`(?m)^  \S+\s+email\.clicked\s+ann@example\.net\s+https://shop\.example/orders/42\S* machine \(127\.0\.0\.0 Mozilla/5\.0\)$`} {
			if !regexp.MustCompile(want).MatchString(shown) {
				t.Errorf("messages get lacks %s:\n%s", want, shown)
			}
		}
		if listed := cli(t, t.TempDir(), env, "messages", "list", "--event", "clicked"); !strings.Contains(listed, tracked) || strings.Count(listed, "\n") != 2 {
			t.Errorf("messages list --event clicked:\n%s\nwant the header and %s alone", listed, tracked)
		}

		// A send that turns tracking off is untouched, signed once for
		// both recipients.
		off := sendTracked(t, c, key, map[string]any{"opens": false, "clicks": false})
		for rcpt, raw := range w.copiesOf(t, off, 2) {
			html, _ := htmlAndText(t, raw)
			if strings.Contains(html, "/t/") {
				t.Errorf("%s: a send with tracking off was rewritten:\n%s", rcpt, html)
			}
		}
	})
}

// sendTracked sends trackedHTML to ann and bob at example.net, with
// tracking when not nil, and returns the message id.
func sendTracked(t *testing.T, c *apitest.Client, key string, tracking map[string]any) string {
	t.Helper()
	body := map[string]any{"from": "orders@shop.example", "to": []string{"ann@example.net", "bob@example.net"},
		"subject": fmt.Sprintf("Shipped %d", time.Now().UnixNano()), "html": trackedHTML,
		"text": "Your order shipped: https://shop.example/orders/42"}
	if tracking != nil {
		body["tracking"] = tracking
	}
	r := c.Do(apitest.Request{Method: "POST", Path: "/v1/send", Key: key, Body: body})
	if r.Status != 200 {
		t.Fatalf("send: %d %s", r.Status, r.Body)
	}
	return r.Str("messageId")
}

// copiesOf waits for the copies of message id that n recipients got and
// returns each recipient's bytes.
func (w *world) copiesOf(t *testing.T, id string, n int) map[string][]byte {
	t.Helper()
	want := strings.TrimPrefix(id, "msg_") + "@shop.example"
	out := map[string][]byte{}
	ok := poll.Within(30*time.Second, func() bool {
		for _, m := range w.mx.Messages() {
			if strings.Trim(messageIDOf(m.Data), "<>") == want {
				for _, r := range m.Rcpts {
					out[r] = m.Data
				}
			}
		}
		return len(out) >= n
	})
	if !ok {
		t.Fatalf("%d of %d copies of %s arrived", len(out), n, id)
	}
	return out
}

// htmlAndText returns the decoded HTML and text parts of raw, as a mail
// reader shows them.
func htmlAndText(t *testing.T, raw []byte) (html, text string) {
	t.Helper()
	e, err := message.Read(bytes.NewReader(raw))
	if err != nil {
		t.Fatalf("parse: %v", err)
	}
	err = e.Walk(func(_ []int, p *message.Entity, err error) error {
		if err != nil {
			return err
		}
		typ, _, _ := mime.ParseMediaType(p.Header.Get("Content-Type"))
		if typ != "text/html" && typ != "text/plain" {
			return nil
		}
		b, err := io.ReadAll(p.Body)
		if err != nil {
			return err
		}
		if typ == "text/html" {
			html = string(b)
		} else {
			text = string(b)
		}
		return nil
	})
	if err != nil {
		t.Fatalf("walk: %v", err)
	}
	return html, text
}

var trackingURL = regexp.MustCompile(`https://[^"'\s<>]+?(/t/[co]/[A-Za-z0-9_-]+)`)

// trackingPaths returns the paths of the tracking addresses of kind
// ("/t/c/" or "/t/o/") in html, in order.
func trackingPaths(html, kind string) []string {
	var out []string
	for _, m := range trackingURL.FindAllStringSubmatch(html, -1) {
		if strings.HasPrefix(m[1], kind) {
			out = append(out, m[1])
		}
	}
	return out
}

// flipTokenChar changes one character in the middle of a path's token.
func flipTokenChar(path string) string {
	i := strings.LastIndex(path, "/") + 1 + (len(path)-strings.LastIndex(path, "/"))/2
	c := byte('A')
	if path[i] == 'A' {
		c = 'B'
	}
	return path[:i] + string(c) + path[i+1:]
}

// noRedirects returns a request function against node that does not
// follow redirects, as a test of where they point must.
func noRedirects(node *server) func(t *testing.T, method, path, agent string) *http.Response {
	hc := &http.Client{
		Transport:     &http.Transport{TLSClientConfig: &tls.Config{RootCAs: node.roots()}},
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
		Timeout:       30 * time.Second,
	}
	return func(t *testing.T, method, path, agent string) *http.Response {
		t.Helper()
		u, err := url.Parse(node.base + path)
		if err != nil {
			t.Fatal(err)
		}
		req, _ := http.NewRequest(method, u.String(), nil)
		req.Header.Set("User-Agent", agent)
		r, err := hc.Do(req)
		if err != nil {
			t.Fatalf("%s %s: %v", method, path, err)
		}
		_, _ = io.Copy(io.Discard, r.Body)
		r.Body.Close()
		return r
	}
}

// deliveredTime is when recipient's delivery of message id was recorded.
func deliveredTime(t *testing.T, c *apitest.Client, key, id, recipient string) time.Time {
	t.Helper()
	m := jsonMap(t, c.Do(apitest.Request{Method: "GET", Path: "/v1/messages/" + id, Key: key}))
	for _, e := range m["events"].([]any) {
		ev := e.(map[string]any)
		if ev["type"] == "email.delivered" && ev["recipient"] == recipient {
			at, err := time.Parse(time.RFC3339Nano, ev["createdAt"].(string))
			if err != nil {
				t.Fatal(err)
			}
			return at
		}
	}
	t.Fatalf("no email.delivered for %s on %s", recipient, id)
	return time.Time{}
}

func jsonMap(t *testing.T, r *apitest.Response) map[string]any {
	t.Helper()
	if r.Status != 200 {
		t.Fatalf("%d %s", r.Status, r.Body)
	}
	var m map[string]any
	if err := json.Unmarshal(r.Body, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

func containsAll(have []string, want ...string) bool {
	for _, w := range want {
		found := false
		for _, h := range have {
			found = found || h == w
		}
		if !found {
			return false
		}
	}
	return true
}
