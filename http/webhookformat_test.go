package http_test

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/mailroom/mailroom"
	"github.com/mailroom/mailroom/apitest"
	"github.com/mailroom/mailroom/client/api"
	"github.com/mailroom/mailroom/poll"
	"github.com/mailroom/mailroom/storetest"
)

// /v1/webhooks takes and shows an endpoint's format (docs/api.md
// "Webhooks"): mailroom by default, resend on request, switched by PATCH,
// and each endpoint is sent the payload of its format.
func TestWebhookFormatOnV1(t *testing.T) {
	storetest.Each(t, func(t *testing.T, eng storetest.Engine) {
		e, rc := newEnvWithHookReceiver(t, eng)
		base := rc.srv.URL

		r := e.hookCall(t, "POST", "/v1/webhooks", map[string]any{"url": base + "/mailroom", "events": []string{"email.queued"}})
		if w := apitest.Decode[api.WebhookCreated](r); r.Status != 201 || w.Format != api.WebhookFormatMailroom {
			t.Fatalf("create without a format: %d %s", r.Status, r.Body)
		}
		r = e.hookCall(t, "POST", "/v1/webhooks", map[string]any{"url": base + "/resend", "events": []string{"email.queued"}, "format": "resend"})
		created := apitest.Decode[api.WebhookCreated](r)
		if r.Status != 201 || created.Format != api.WebhookFormatResend {
			t.Fatalf("create with format resend: %d %s", r.Status, r.Body)
		}
		id := created.ID
		if w := apitest.Decode[api.Webhook](e.hookCall(t, "GET", "/v1/webhooks/"+id, nil)); w.Format != api.WebhookFormatResend {
			t.Fatalf("GET shows format %q", w.Format)
		}
		formats := map[string]api.WebhookFormat{}
		for _, w := range apitest.Decode[api.List[api.Webhook]](e.hookCall(t, "GET", "/v1/webhooks", nil)).Data {
			formats[w.URL] = w.Format
		}
		if formats[base+"/mailroom"] != api.WebhookFormatMailroom || formats[base+"/resend"] != api.WebhookFormatResend {
			t.Fatalf("the list shows formats %v", formats)
		}

		// PATCH switches the format and leaves it when not given.
		for _, c := range []struct {
			body map[string]any
			want api.WebhookFormat
		}{
			{map[string]any{"format": "mailroom"}, api.WebhookFormatMailroom},
			{map[string]any{"description": "orders"}, api.WebhookFormatMailroom},
			{map[string]any{"format": "resend"}, api.WebhookFormatResend},
		} {
			r := e.hookCall(t, "PATCH", "/v1/webhooks/"+id, c.body)
			if w := apitest.Decode[api.Webhook](r); r.Status != 200 || w.Format != c.want {
				t.Fatalf("PATCH %v: %d %s", c.body, r.Status, r.Body)
			}
		}
		for _, c := range []struct{ method, path string }{{"POST", "/v1/webhooks"}, {"PATCH", "/v1/webhooks/" + id}} {
			r := e.hookCall(t, c.method, c.path, map[string]any{"url": base + "/x", "events": []string{"*"}, "format": "svix"})
			wantError(t, r, 400, mailroom.ECodeValidation)
			if !detailMentions(r, "format", `"resend"`) {
				t.Errorf("%s %s with format svix: %s", c.method, c.path, r.Body)
			}
		}

		// Each endpoint is sent its format's payload of the same event.
		e.verifiedDomain(t, "shop.example")
		e.mailDomain("example.net")
		sent := e.send(t, map[string]any{"from": "orders@shop.example", "to": "ann@example.net", "subject": "Hi", "text": "x"})
		if sent.Status != 200 {
			t.Fatalf("send: %d %s", sent.Status, sent.Body)
		}
		msgID := sent.Str("messageId")
		_, p, _ := rc.waitFor(t, "email.sent", msgID) // Resend's name of email.queued
		if p.CreatedAt == "" {
			t.Errorf("the resend payload has no created_at: %+v", p)
		}
		poll.Until(t, 20*time.Second, "Mailroom's payload at /mailroom", func() bool {
			rc.mu.Lock()
			defer rc.mu.Unlock()
			for _, got := range rc.got {
				var body struct {
					Type      string `json:"type"`
					Timestamp string `json:"timestamp"`
					Data      struct {
						MessageID string `json:"messageId"`
					} `json:"data"`
				}
				if got.path == "/mailroom" && json.Unmarshal(got.body, &body) == nil && body.Type == "email.queued" &&
					body.Timestamp != "" && body.Data.MessageID == msgID {
					return true
				}
			}
			return false
		})
		rc.mu.Lock()
		defer rc.mu.Unlock()
		for _, got := range rc.got {
			var body struct{ Type string }
			if json.Unmarshal(got.body, &body) != nil || (got.path == "/resend") != (body.Type == "email.sent") {
				t.Errorf("%s was sent %s", got.path, got.body)
			}
		}
	})
}
