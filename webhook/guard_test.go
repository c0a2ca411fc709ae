package webhook

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/mailroom/mailroom"
	"github.com/mailroom/mailroom/storetest"
)

// A redirect is a failed attempt, and its target is never called: it was
// never checked, and could be anywhere (docs/api.md "Webhooks and events").
func TestRedirectIsNotFollowed(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, e storetest.Engine) {
		w := newWorld(t, e)
		rc := w.receiver(func(_ int, rw http.ResponseWriter, r *http.Request) {
			if r.URL.Path == "/elsewhere" {
				rw.WriteHeader(http.StatusOK)
				return
			}
			http.Redirect(rw, r, "/elsewhere", http.StatusFound)
		})
		ep, _ := w.endpoint(rc.URL())
		w.start(w.dispatcher())
		w.testEvent(ep)

		a := w.waitAttempts(ep, 1)[0]
		if a.Status != mailroom.WebhookAttemptFailed || a.StatusCode != 302 || a.Error != "redirect (302) not followed" || a.NextAttemptAt == nil {
			t.Fatalf("attempt %+v", a)
		}
		for _, r := range rc.requests() {
			if r.path == "/elsewhere" {
				t.Fatal("the redirect was followed")
			}
		}
	})
}

// Without --webhooks-allow-private, the guard refuses the address a URL
// resolves to when connecting (a name that was public when it was saved
// may point at loopback now): the attempt fails saying why, and nothing
// reaches the receiver. A plain-http URL is refused before any connection.
func TestPrivateAddressIsRefused(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, e storetest.Engine) {
		w := newWorld(t, e)
		rc := w.receiver(nil)
		var plainHits atomic.Int64
		plain := httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, _ *http.Request) { plainHits.Add(1) }))
		t.Cleanup(plain.Close)
		loopback, _ := w.endpoint(rc.URL())
		cleartext, _ := w.endpoint(plain.URL + "/hooks")
		d := w.dispatcher()
		d.AllowPrivate = false
		w.start(d)
		w.testEvent(loopback)
		w.testEvent(cleartext)

		a := w.waitAttempts(loopback, 1)[0]
		if a.Status != mailroom.WebhookAttemptFailed || a.StatusCode != 0 || a.NextAttemptAt == nil ||
			a.Error != "address not allowed: 127.0.0.1 is a loopback address" {
			t.Fatalf("attempt %+v", a)
		}
		if n := len(rc.requests()); n != 0 {
			t.Fatalf("the receiver got %d requests", n)
		}
		a = w.waitAttempts(cleartext, 1)[0]
		if a.Status != mailroom.WebhookAttemptFailed || !strings.Contains(a.Error, "https") {
			t.Fatalf("plain-http attempt %+v", a)
		}
		if n := plainHits.Load(); n != 0 {
			t.Fatalf("the plain-http receiver got %d requests", n)
		}
	})
}
