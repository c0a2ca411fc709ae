package webhook

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mailroom/mailroom"
	"github.com/mailroom/mailroom/storetest"
)

// A delivery is the request of Standard Webhooks: it verifies with the
// endpoint's secret, and a body changed on the way does not.
func TestDeliveryIsSigned(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, e storetest.Engine) {
		w := newWorld(t, e)
		rc := w.receiver(func(_ int, rw http.ResponseWriter, _ *http.Request) {
			rw.WriteHeader(http.StatusOK)
			rw.Write([]byte(`{"received":true}`))
		})
		ep, secret := w.endpoint(rc.URL())
		w.start(w.dispatcher())
		ev := w.testEvent(ep)

		r := rc.waitRequests(t, 1)[0]
		key := secretKey(t, secret)
		if err := r.verify(key, w.clock.Now()); err != nil {
			t.Fatalf("the delivery does not verify: %v", err)
		}
		tampered := bytes.Replace(r.body, []byte(`"webhook.test"`), []byte(`"email.bounced"`), 1)
		if bytes.Equal(tampered, r.body) {
			t.Fatalf("the body has no type to tamper with: %s", r.body)
		}
		if err := Verify(key, r.header.Get("webhook-id"), r.header.Get("webhook-timestamp"),
			r.header.Get("webhook-signature"), tampered, w.clock.Now()); err == nil {
			t.Fatal("a tampered body verifies")
		}

		for name, want := range map[string]string{
			"content-type":      "application/json",
			"webhook-id":        ev.ID,
			"webhook-timestamp": strconv.FormatInt(w.clock.Now().Unix(), 10),
			"user-agent":        "Mailroom-Webhooks/test",
		} {
			if got := r.header.Get(name); got != want {
				t.Errorf("%s: %q, want %q", name, got, want)
			}
		}
		if sigs := strings.Fields(r.header.Get("webhook-signature")); len(sigs) != 1 || !strings.HasPrefix(sigs[0], "v1,") {
			t.Errorf("webhook-signature %q: want one v1 signature", r.header.Get("webhook-signature"))
		}
		var body struct {
			Type, Timestamp string
			Data            json.RawMessage
		}
		if err := json.Unmarshal(r.body, &body); err != nil || body.Type != mailroom.EventWebhookTest ||
			body.Timestamp != ev.CreatedAt.Format("2006-01-02T15:04:05.000Z07:00") || !bytes.Contains(body.Data, []byte(ep.ID)) {
			t.Fatalf("body %s (%v)", r.body, err)
		}

		a := w.waitAttempts(ep, 1)[0]
		if a.Status != mailroom.WebhookAttemptSucceeded || a.StatusCode != 200 || a.Error != "" || a.Attempt != 1 ||
			a.EventID != ev.ID || a.EventType != mailroom.EventWebhookTest || a.ResponseBody != `{"received":true}` ||
			a.NextAttemptAt != nil || a.Duration <= 0 {
			t.Fatalf("attempt %+v", a)
		}
		if n, _, err := w.store.WebhookBacklog(context.Background()); err != nil || n != 0 {
			t.Fatalf("backlog after a success: %d (%v)", n, err)
		}
	})
}

// During the day after a rotation both secrets sign, so that a consumer
// may switch at any time in it; after it, only the new one.
func TestRotationSignsWithBoth(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, e storetest.Engine) {
		w := newWorld(t, e)
		rc := w.receiver(nil)
		ep, oldSecret := w.endpoint(rc.URL())
		newSecret, _, err := w.svc.RotateSecret(context.Background(), w.acct.ID, ep.ID)
		if err != nil {
			t.Fatal(err)
		}
		w.start(w.dispatcher())

		w.testEvent(ep)
		r := rc.waitRequests(t, 1)[0]
		if sigs := strings.Fields(r.header.Get("webhook-signature")); len(sigs) != 2 {
			t.Fatalf("webhook-signature %q: want two signatures during the rotation", r.header.Get("webhook-signature"))
		}
		for name, secret := range map[string]string{"old": oldSecret, "new": newSecret} {
			if err := r.verify(secretKey(t, secret), w.clock.Now()); err != nil {
				t.Errorf("the %s secret does not verify during the rotation: %v", name, err)
			}
		}

		w.clock.Advance(mailroom.WebhookRotationOverlap + time.Minute)
		w.testEvent(ep)
		r = rc.waitRequests(t, 2)[1]
		if sigs := strings.Fields(r.header.Get("webhook-signature")); len(sigs) != 1 {
			t.Fatalf("webhook-signature %q: want one signature after the rotation", r.header.Get("webhook-signature"))
		}
		if err := r.verify(secretKey(t, newSecret), w.clock.Now()); err != nil {
			t.Errorf("the new secret does not verify: %v", err)
		}
		if err := r.verify(secretKey(t, oldSecret), w.clock.Now()); err == nil {
			t.Error("the old secret still verifies a day after the rotation")
		}
	})
}
