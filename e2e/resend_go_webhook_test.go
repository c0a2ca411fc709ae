package e2e

import (
	"encoding/json"
	"slices"
	"testing"

	"github.com/resend/resend-go/v3"
)

// resendPayload is Resend's webhook body as its docs show it.
type resendPayload struct {
	Type      string `json:"type"`
	CreatedAt string `json:"created_at"`
	Data      struct {
		EmailID string            `json:"email_id"`
		From    string            `json:"from"`
		To      []string          `json:"to"`
		Subject string            `json:"subject"`
		Tags    map[string]string `json:"tags"`
	} `json:"data"`
}

// resendGoWebhooks: an endpoint made with Webhooks.Create receives
// Resend's payload for the events it chose, with svix-* headers that the
// Go SDK's Webhooks.Verify accepts under the signing secret Create gave
// (and refuses for a tampered body); Get, List, Update and Remove answer
// in the SDK's types.
func resendGoWebhooks(t *testing.T, e *resendEnv) {
	c, _ := e.goSDK(t, e.key)
	hook, err := c.Webhooks.Create(&resend.CreateWebhookRequest{Endpoint: e.outside.hookURL("/hooks/go"),
		Events: []string{resend.EventEmailSent, resend.EventEmailDelivered}})
	if err != nil || hook.Id == "" || hook.Object != "webhook" || hook.SigningSecret == "" {
		t.Fatalf("Webhooks.Create: %v %+v", err, hook)
	}
	sent, err := c.Emails.Send(&resend.SendEmailRequest{From: "orders@shop.example", To: []string{"hooked@example.net"},
		Subject: "Hooked 7001", Text: "Watch.", Tags: []resend.Tag{{Name: "flow", Value: "hooks"}}})
	if err != nil {
		t.Fatalf("send: %v", err)
	}
	var p resendPayload
	h := e.outside.waitHook(t, "/hooks/go", "email.delivered for the email arrives", func(h hookPost) bool {
		var q resendPayload
		return json.Unmarshal(h.Body, &q) == nil && q.Type == "email.delivered" && q.Data.EmailID == sent.Id
	})
	_ = json.Unmarshal(h.Body, &p)
	if p.CreatedAt == "" || p.Data.From != "orders@shop.example" || !slices.Equal(p.Data.To, []string{"hooked@example.net"}) ||
		p.Data.Subject != "Hooked 7001" || p.Data.Tags["flow"] != "hooks" {
		t.Errorf("Resend's payload: %s", h.Body)
	}
	verify := func(body string) error {
		return c.Webhooks.Verify(&resend.VerifyWebhookOptions{Payload: body, WebhookSecret: hook.SigningSecret,
			Headers: resend.WebhookHeaders{Id: h.Header.Get("svix-id"), Timestamp: h.Header.Get("svix-timestamp"), Signature: h.Header.Get("svix-signature")}})
	}
	if err := verify(string(h.Body)); err != nil {
		t.Errorf("the Go SDK's Webhooks.Verify refuses a delivery: %v (headers %v)", err, h.Header)
	}
	if err := verify(string(h.Body) + " "); err == nil {
		t.Error("the Go SDK's Webhooks.Verify accepts a tampered body")
	}
	if h.Header.Get("svix-id") != h.Header.Get("webhook-id") || h.Header.Get("svix-signature") != h.Header.Get("webhook-signature") {
		t.Errorf("svix-* and webhook-* differ: %v", h.Header)
	}
	// The endpoint chose sent and delivered: nothing else reaches it.
	e.outside.mu.Lock()
	for _, q := range e.outside.hooks {
		var qp resendPayload
		if q.Path == "/hooks/go" && json.Unmarshal(q.Body, &qp) == nil && qp.Type != "email.sent" && qp.Type != "email.delivered" {
			t.Errorf("the endpoint got %s", qp.Type)
		}
	}
	e.outside.mu.Unlock()

	got, err := c.Webhooks.Get(hook.Id)
	if err != nil || got.Id != hook.Id || got.Endpoint != e.outside.hookURL("/hooks/go") || got.Status != "enabled" ||
		!slices.Equal(slices.Sorted(slices.Values(got.Events)), []string{"email.delivered", "email.sent"}) {
		t.Errorf("Webhooks.Get: %v %+v", err, got)
	}
	list, err := c.Webhooks.List()
	if err != nil || list.Object != "list" || !slices.ContainsFunc(list.Data, func(w resend.WebhookInList) bool { return w.Id == hook.Id }) {
		t.Errorf("Webhooks.List: %v %+v", err, list)
	}
	disabled := "disabled"
	if up, err := c.Webhooks.Update(hook.Id, &resend.UpdateWebhookRequest{Status: &disabled}); err != nil || up.Id != hook.Id {
		t.Errorf("Webhooks.Update: %v %+v", err, up)
	}
	if got, err := c.Webhooks.Get(hook.Id); err != nil || got.Status != "disabled" {
		t.Errorf("after disabling: %v %+v", err, got)
	}
	if del, err := c.Webhooks.Remove(hook.Id); err != nil || !del.Deleted || del.Id != hook.Id {
		t.Errorf("Webhooks.Remove: %v %+v", err, del)
	}
}
