package http_test

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/emersion/go-message/mail"
	"github.com/emersion/go-msgauth/dkim"

	"github.com/mailroom/mailroom"
	"github.com/mailroom/mailroom/apitest"
	"github.com/mailroom/mailroom/smtp/smtptest"
	"github.com/mailroom/mailroom/storetest"
)

// unsubscribeLink returns the token of the https link in a received
// message's List-Unsubscribe, checking the pair as a mailbox provider
// does: both fields present, and both under a DKIM signature that
// verifies against the published key (RFC 8058 §3.1, §4).
func unsubscribeLink(t *testing.T, e *env, m smtptest.Received) string {
	t.Helper()
	r, err := mail.CreateReader(bytes.NewReader(m.Data))
	if err != nil {
		t.Fatal(err)
	}
	if v := r.Header.Get("List-Unsubscribe-Post"); v != "List-Unsubscribe=One-Click" {
		t.Fatalf("%v: List-Unsubscribe-Post %q", m.Rcpts, v)
	}
	link := r.Header.Get("List-Unsubscribe")
	https, mailto, _ := strings.Cut(link, ", ")
	prefix := "<https://" + serviceHost + "/v1/unsubscribe/"
	if !strings.HasPrefix(https, prefix) || !strings.HasSuffix(https, ">") ||
		!strings.HasPrefix(mailto, "<mailto:unsubscribe-") || !strings.HasSuffix(mailto, "@bounces.shop.example>") {
		t.Fatalf("%v: List-Unsubscribe %q", m.Rcpts, link)
	}
	vs, err := dkim.VerifyWithOptions(bytes.NewReader(m.Data), &dkim.VerifyOptions{
		LookupTXT: func(name string) ([]string, error) { return lookupTXT(e, name) },
	})
	if err != nil || len(vs) != 1 || vs[0].Err != nil || vs[0].Domain != "shop.example" {
		t.Fatalf("%v: DKIM: %v %+v", m.Rcpts, err, vs)
	}
	for _, k := range []string{"List-Unsubscribe", "List-Unsubscribe-Post"} {
		if !slices.Contains(vs[0].HeaderKeys, k) {
			t.Fatalf("%v: h=%v does not name %s", m.Rcpts, vs[0].HeaderKeys, k)
		}
	}
	return strings.TrimSuffix(strings.TrimPrefix(https, prefix), ">")
}

// received returns what the receiver got for rcpt, the last transaction
// first.
func received(t *testing.T, e *env, rcpt string) []smtptest.Received {
	t.Helper()
	var out []smtptest.Received
	for _, m := range e.mx.Messages() {
		if slices.Contains(m.Rcpts, rcpt) {
			out = append([]smtptest.Received{m}, out...)
		}
	}
	return out
}

func TestOneClickUnsubscribe(t *testing.T) {
	storetest.Each(t, func(t *testing.T, eng storetest.Engine) {
		e := newEnv(t, eng)
		e.verifiedDomain(t, "shop.example")
		e.mailDomain("example.net")
		news := func(to ...string) *apitest.Response {
			t.Helper()
			return e.send(t, map[string]any{"from": "News <news@shop.example>", "to": to, "subject": "Autumn sale",
				"html": "<p>20% off</p>", "category": "marketing"})
		}

		r := news("Ann <ann@example.net>", "bob@example.net")
		id := r.Str("messageId")
		e.waitStatus(t, id, "delivered")
		// One copy each, each with its own link, signed.
		got := e.mx.WaitMessages(t, 2, 10*time.Second)
		tokens := map[string]string{}
		for _, m := range got {
			if len(m.Rcpts) != 1 {
				t.Fatalf("a marketing transaction with recipients %v", m.Rcpts)
			}
			tokens[m.Rcpts[0]] = unsubscribeLink(t, e, m)
		}
		ann := tokens["ann@example.net"]
		if ann == "" || tokens["bob@example.net"] == "" || ann == tokens["bob@example.net"] {
			t.Fatalf("links %v", tokens)
		}
		// The log's raw view is the first recipient's copy, byte for byte.
		raw := e.Do(apitest.Request{Method: "GET", Path: "/v1/messages/" + id + "/raw", Key: e.admin})
		if raw.Status != 200 || !bytes.Equal(raw.Body, received(t, e, "ann@example.net")[0].Data) {
			t.Fatalf("raw view %d differs from Ann's copy", raw.Status)
		}

		path := "/v1/unsubscribe/" + ann
		notSuppressed := func() {
			t.Helper()
			wantError(t, e.Do(apitest.Request{Method: "GET", Path: "/v1/suppressions/ann@example.net", Key: e.admin}), 404, mailroom.ECodeNotFound)
		}

		// GET shows a page and changes nothing, however often it is
		// followed (link scanners).
		for range 2 {
			page := e.Do(apitest.Request{Method: "GET", Path: path})
			body := string(page.Body)
			if page.Status != 200 || !strings.HasPrefix(page.Header.Get("Content-Type"), "text/html") ||
				!strings.Contains(body, "ann@example.net") || !strings.Contains(body, `<form method="post">`) ||
				!strings.Contains(body, `<button type="submit">`) || !strings.Contains(body, `name="List-Unsubscribe" value="One-Click"`) {
				t.Fatalf("page: %d %s", page.Status, body)
			}
			if csp := page.Header.Get("Content-Security-Policy"); !strings.Contains(csp, "default-src 'none'") ||
				!strings.Contains(csp, "form-action 'self'") || strings.Contains(csp, "unsafe") {
				t.Fatalf("CSP %q", csp)
			}
			if strings.Contains(body, "<script") || strings.Contains(body, "src=") || strings.Contains(body, "href=") {
				t.Fatalf("the page loads something: %s", body)
			}
		}
		if r := e.Do(apitest.Request{Method: "HEAD", Path: path, NoCheck: true}); r.Status != 200 {
			t.Fatalf("HEAD: %d", r.Status)
		}
		notSuppressed()

		// A tampered token: 404, a page for GET, the JSON error for POST.
		tampered := "/v1/unsubscribe/" + ann[:10] + flip(ann[10]) + ann[11:]
		if page := e.Do(apitest.Request{Method: "GET", Path: tampered}); page.Status != 404 ||
			!strings.HasPrefix(page.Header.Get("Content-Type"), "text/html") || strings.Contains(string(page.Body), "<form") {
			t.Fatalf("tampered GET: %d %s", page.Status, page.Body)
		}
		oneClick := func(path string, header map[string]string) *apitest.Response {
			h := map[string]string{"Content-Type": "application/x-www-form-urlencoded"}
			for k, v := range header {
				h[k] = v
			}
			return e.Do(apitest.Request{Method: "POST", Path: path, Body: "List-Unsubscribe=One-Click", Header: h})
		}
		wantError(t, oneClick(tampered, nil), 404, mailroom.ECodeNotFound)
		wantError(t, oneClick("/v1/unsubscribe/"+strings.Repeat("A", 600), nil), 404, mailroom.ECodeNotFound)
		notSuppressed()

		// The one-click POST, as a mailbox provider sends it.
		done := oneClick(path, nil)
		if done.Status != 200 || done.Str("status") != "unsubscribed" || done.Str("address") != "ann@example.net" {
			t.Fatalf("POST: %d %s", done.Status, done.Body)
		}
		entry := e.Do(apitest.Request{Method: "GET", Path: "/v1/suppressions/ann@example.net", Key: e.admin})
		if entry.Status != 200 || entry.Str("reason") != "unsubscribe" || entry.Str("messageId") != id {
			t.Fatalf("suppression: %d %s", entry.Status, entry.Body)
		}
		// Again, as a browser submitting the page's form, and with no
		// body at all: 200, and nothing changes.
		if again := oneClick(path, map[string]string{"Accept": "text/html,application/xhtml+xml,*/*;q=0.8"}); again.Status != 200 ||
			!strings.Contains(string(again.Body), "You are unsubscribed") || again.Header.Get("Content-Security-Policy") == "" {
			t.Fatalf("second POST: %d %s", again.Status, again.Body)
		}
		if again := e.Do(apitest.Request{Method: "POST", Path: path}); again.Status != 200 {
			t.Fatalf("POST without a body: %d %s", again.Status, again.Body)
		}
		if same := e.Do(apitest.Request{Method: "GET", Path: "/v1/suppressions/ann@example.net", Key: e.admin}); !bytes.Equal(same.Body, entry.Body) {
			t.Fatalf("a second POST changed the entry: %s, was %s", same.Body, entry.Body)
		}
		wantError(t, e.Do(apitest.Request{Method: "POST", Path: path, Body: strings.Repeat("x", 65<<10),
			Header: map[string]string{"Content-Type": "text/plain"}}), 413, mailroom.ECodePayloadTooLarge)
		wantError(t, e.Do(apitest.Request{Method: "DELETE", Path: path}), 405, mailroom.ECodeMethodNotAllowed)
		list := e.Do(apitest.Request{Method: "GET", Path: "/v1/suppressions", Key: e.admin}).Map()["data"].([]any)
		if len(list) != 1 || list[0].(map[string]any)["reason"] != "unsubscribe" {
			t.Fatalf("list %v", list)
		}

		// Marketing mail to Ann is suppressed from now on; transactional
		// mail still reaches her, without the pair.
		later := news("ann@example.net", "bob@example.net")
		m := e.waitStatus(t, later.Str("messageId"), "partially_delivered")
		for _, rc := range m["recipients"].([]any) {
			rec := rc.(map[string]any)
			if want := map[string]string{"ann@example.net": "suppressed", "bob@example.net": "delivered"}[rec["address"].(string)]; rec["status"] != want {
				t.Fatalf("later marketing mail: recipient %v, want %s", rec, want)
			}
		}
		e.waitStatus(t, news("ann@example.net").Str("messageId"), "suppressed")
		receipt := e.sendOne(t, "ann@example.net")
		e.waitStatus(t, receipt, "delivered")
		if last := received(t, e, "ann@example.net"); len(last) != 2 || bytes.Contains(last[0].Data, []byte("List-Unsubscribe")) {
			t.Fatalf("Ann received %d messages; the receipt carries List-Unsubscribe: %v", len(last),
				len(last) > 0 && bytes.Contains(last[0].Data, []byte("List-Unsubscribe")))
		}

		// Suppressing her by hand stops all mail: the entry becomes manual.
		manual := e.Do(apitest.Request{Method: "POST", Path: "/v1/suppressions", Key: e.admin, Body: map[string]string{"address": "ann@example.net"}})
		if manual.Status != 201 || manual.Str("reason") != "manual" {
			t.Fatalf("manual entry over an unsubscribe: %d %s", manual.Status, manual.Body)
		}
		e.waitStatus(t, e.sendOne(t, "ann@example.net"), "suppressed")
		// And the unsubscribe link cannot weaken it.
		if r := oneClick(path, nil); r.Status != 200 {
			t.Fatalf("POST over a manual entry: %d", r.Status)
		}
		if r := e.Do(apitest.Request{Method: "GET", Path: "/v1/suppressions/ann@example.net", Key: e.admin}); r.Str("reason") != "manual" {
			t.Fatalf("after the link: %s", r.Body)
		}
	})
}

// The page escapes what it shows: an address is the recipient's, but its
// local part may hold any character a quoted string allows.
func TestUnsubscribePageEscapes(t *testing.T) {
	e := newEnv(t, storetest.SQLite)
	addr := `"<script>alert('x')</script>&amp;"@example.net`
	tok, err := e.unsubscribe.Token(mailroom.Unsubscribe{AccountID: e.acct.ID, MessageID: mailroom.NewID(mailroom.PrefixMessage, time.Now()), Address: addr})
	if err != nil {
		t.Fatal(err)
	}
	page := e.Do(apitest.Request{Method: "GET", Path: "/v1/unsubscribe/" + tok})
	body := string(page.Body)
	if page.Status != 200 || strings.Contains(body, "<script>") || strings.Contains(body, "&amp;\"@") ||
		!strings.Contains(body, "&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt;&amp;amp;") {
		t.Fatalf("page: %d %s", page.Status, body)
	}
	// The CSP allows the page's one style by its hash, and nothing else.
	style := body[strings.Index(body, "<style>")+len("<style>") : strings.Index(body, "</style>")]
	sum := sha256.Sum256([]byte(style))
	if csp := page.Header.Get("Content-Security-Policy"); !strings.Contains(csp, "style-src 'sha256-"+base64.StdEncoding.EncodeToString(sum[:])+"'") {
		t.Fatalf("the CSP %q does not allow the page's style", csp)
	}
	// The JSON answer carries it as a string, and it is suppressed as given.
	r := e.Do(apitest.Request{Method: "POST", Path: "/v1/unsubscribe/" + tok})
	if r.Status != 200 || r.Str("address") != addr {
		t.Fatalf("POST: %d %s", r.Status, r.Body)
	}
	if sup, err := e.store.Suppression(t.Context(), e.acct.ID, addr); err != nil || sup.Reason != mailroom.SuppressedUnsubscribe {
		t.Fatalf("suppression %+v %v", sup, err)
	}
}
