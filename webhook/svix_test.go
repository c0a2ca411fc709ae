package webhook

import (
	"context"
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"github.com/mailroom/mailroom"
	"github.com/mailroom/mailroom/storetest"
)

// svixOnly is r as Resend's webhooks.verify hands it to the Standard
// Webhooks library: its caller passes the svix-id, svix-timestamp and
// svix-signature headers ({id, timestamp, signature}), and the SDK gives
// them to the library under the webhook-* names (resend 6.38,
// Webhooks.verify). r's own webhook-* headers are not used.
func svixOnly(r *received) *received {
	h := http.Header{}
	for _, name := range []string{"Id", "Timestamp", "Signature"} {
		h.Set("Webhook-"+name, r.header.Get("Svix-"+name))
	}
	return &received{header: h, body: r.body, path: r.path}
}

// Every request, whatever the endpoint's format, carries the signature
// under Svix's names too, with the webhook-* values: the Standard Webhooks
// library verifies it from those alone, during a rotation with either
// secret.
func TestSvixHeadersVerify(t *testing.T) {
	t.Parallel()
	dir := requireStandardWebhooks(t)
	storetest.Each(t, func(t *testing.T, e storetest.Engine) {
		w := newWorld(t, e)
		rc := w.receiver(nil)
		w.start(w.dispatcher())
		for _, format := range mailroom.WebhookFormats {
			url, all, f := rc.URL(), []string{mailroom.AllEventTypes}, string(format)
			ep, secret, err := w.svc.Create(context.Background(), w.acct.ID, &Request{URL: &url, Events: &all, Format: &f})
			if err != nil {
				t.Fatal(err)
			}
			n := len(rc.requests())
			w.testEvent(ep)
			r := rc.waitRequests(t, n+1)[n]
			for _, h := range []string{"Id", "Timestamp", "Signature"} {
				if got, want := r.header.Get("Svix-"+h), r.header.Get("Webhook-"+h); got == "" || got != want {
					t.Errorf("%s: svix-%s %q, webhook-%s %q", format, h, got, h, want)
				}
			}
			svix := svixOnly(r)
			if ok, out := standardWebhooksVerify(t, dir, secret, svix, r.body); !ok {
				t.Fatalf("%s: the library refuses the svix-* headers: %s", format, out)
			}
			if err := Verify(secretKey(t, secret), r.header.Get("svix-id"), r.header.Get("svix-timestamp"), r.header.Get("svix-signature"), r.body, time.Now()); err != nil {
				t.Errorf("%s: Verify refuses the svix-* headers: %v", format, err)
			}

			newSecret, _, err := w.svc.RotateSecret(context.Background(), w.acct.ID, ep.ID)
			if err != nil {
				t.Fatal(err)
			}
			w.testEvent(ep)
			r = svixOnly(rc.waitRequests(t, n+2)[n+1])
			for name, s := range map[string]string{"old": secret, "new": newSecret} {
				if ok, out := standardWebhooksVerify(t, dir, s, r, r.body); !ok {
					t.Errorf("%s: the library refuses the %s secret from the svix-* headers during a rotation: %s", format, name, out)
				}
			}
		}
	})
}

// A Resend-format endpoint is sent Resend's envelope, {type, created_at,
// data}, and the signature is over exactly the bytes it receives.
func TestResendFormatBody(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, e storetest.Engine) {
		w := newWorld(t, e)
		rc := w.receiver(nil)
		w.start(w.dispatcher())
		url, all, f := rc.URL(), []string{mailroom.AllEventTypes}, string(mailroom.WebhookFormatResend)
		ep, secret, err := w.svc.Create(context.Background(), w.acct.ID, &Request{URL: &url, Events: &all, Format: &f})
		if err != nil || ep.Format != mailroom.WebhookFormatResend {
			t.Fatalf("create: %v, format %q", err, ep.Format)
		}
		ev := w.testEvent(ep)
		r := rc.waitRequests(t, 1)[0]
		if err := r.verify(secretKey(t, secret), time.Now()); err != nil {
			t.Fatalf("verify: %v", err)
		}
		var body map[string]json.RawMessage
		if err := json.Unmarshal(r.body, &body); err != nil {
			t.Fatal(err)
		}
		if len(body) != 3 || string(body["type"]) != `"webhook.test"` || string(body["created_at"]) != `"`+ev.CreatedAt.Format("2006-01-02T15:04:05.000Z")+`"` ||
			body["timestamp"] != nil {
			t.Fatalf("body %s", r.body)
		}
		if r.header.Get("Webhook-Id") != ev.ID {
			t.Errorf("webhook-id %q, want the event's id %s", r.header.Get("Webhook-Id"), ev.ID)
		}
	})
}
