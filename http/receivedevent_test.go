package http_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/mailroom/mailroom"
	"github.com/mailroom/mailroom/apitest"
	"github.com/mailroom/mailroom/poll"
	"github.com/mailroom/mailroom/resend"
	"github.com/mailroom/mailroom/storetest"
	"github.com/mailroom/mailroom/webhook"
)

// A received message's email.received event, stored with it, is delivered
// to the endpoints that subscribe to it, in Mailroom's body and in
// Resend's, each signed; and GET /v1/events lists it with its data as the
// OpenAPI document describes. Both engines.
func TestReceivedEventReachesWebhooksAndEvents(t *testing.T) {
	storetest.Each(t, func(t *testing.T, eng storetest.Engine) {
		e, rc := newEnvWithHookReceiver(t, eng)
		own := e.createHook(t, map[string]any{"url": rc.srv.URL + "/own", "events": []string{"email.received"}})
		r := e.resendCall(t, e.admin, "POST", "/webhooks", map[string]any{"endpoint": rc.srv.URL + "/resend", "events": []string{"email.received"}})
		if r.Status != 200 {
			t.Fatalf("Resend-format endpoint: %d %s", r.Status, r.Body)
		}
		resendSecret := r.Str("signing_secret")

		m, ev := storetest.NewReceived(t, e.acct, "support+order@in.example", time.Now().UTC().Truncate(time.Millisecond))
		if err := e.store.SaveReceived(context.Background(), []*mailroom.ReceivedMessage{m}, []*mailroom.Event{ev}); err != nil {
			t.Fatal(err)
		}

		var ownReq, resendReq hookRequest
		poll.Until(t, 20*time.Second, "both deliveries of email.received", func() bool {
			rc.mu.Lock()
			defer rc.mu.Unlock()
			for _, got := range rc.got {
				switch got.path {
				case "/own":
					ownReq = got
				case "/resend":
					resendReq = got
				}
			}
			return ownReq.body != nil && resendReq.body != nil
		})

		var body struct {
			Type string                     `json:"type"`
			Data mailroom.ReceivedEventData `json:"data"`
		}
		if err := json.Unmarshal(ownReq.body, &body); err != nil || body.Type != "email.received" || body.Data.ReceivedID != m.ID ||
			len(body.Data.Recipients) != 1 || body.Data.Recipients[0] != "support+order@in.example" || len(body.Data.Attachments) != 1 ||
			body.Data.Authentication.DMARC != mailroom.AuthPass {
			t.Fatalf("Mailroom's body: %s (%v)", ownReq.body, err)
		}
		key, err := webhook.ParseSecret(own["secret"].(string))
		if err != nil {
			t.Fatal(err)
		}
		if err := webhook.Verify(key, ownReq.header.Get("webhook-id"), ownReq.header.Get("webhook-timestamp"), ownReq.header.Get("webhook-signature"), ownReq.body, time.Now()); err != nil {
			t.Errorf("Mailroom's delivery does not verify: %v", err)
		}
		if ownReq.header.Get("webhook-id") != ev.ID {
			t.Errorf("webhook-id %q, want the event's id %s", ownReq.header.Get("webhook-id"), ev.ID)
		}

		verifyAsResend(t, resendSecret, resendReq)
		var p resend.Payload
		var rd resend.ReceivedData
		if err := json.Unmarshal(resendReq.body, &p); err != nil || p.Type != "email.received" || json.Unmarshal(p.Data, &rd) != nil ||
			rd.EmailID != m.ID || rd.Subject != m.Subject || len(rd.Attachments) != 1 || rd.Attachments[0].ContentType != "application/pdf" {
			t.Fatalf("Resend's body: %s", resendReq.body)
		}

		// The API client checks each answer against the OpenAPI document.
		list := e.Do(apitest.Request{Method: "GET", Path: "/v1/events?type=email.received", Key: e.admin})
		var events struct {
			Data []struct {
				ID   string                     `json:"id"`
				Type string                     `json:"type"`
				Data mailroom.ReceivedEventData `json:"data"`
			} `json:"data"`
		}
		if err := json.Unmarshal(list.Body, &events); err != nil || list.Status != 200 || len(events.Data) != 1 ||
			events.Data[0].ID != ev.ID || events.Data[0].Data.ReceivedID != m.ID {
			t.Fatalf("GET /v1/events?type=email.received: %d %s", list.Status, list.Body)
		}
	})
}
