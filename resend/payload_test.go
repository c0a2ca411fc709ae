package resend

import (
	"encoding/json"
	"reflect"
	"testing"
	"time"

	"github.com/mailroom/mailroom"
)

// payloadOf renders an email event of type typ for a recipient in state r
// as a Resend-format endpoint receives it: from the event as storage gives
// it back (its data JSON only, Email nil), which is what the dispatcher
// holds.
func payloadOf(t *testing.T, typ string, r *mailroom.Recipient, at time.Time) map[string]any {
	t.Helper()
	accepted := time.Date(2026, 3, 1, 9, 30, 0, 123e6, time.UTC)
	m := &mailroom.MessageSummary{ID: mailroom.NewID(mailroom.PrefixMessage, accepted), AccountID: "acct_x",
		From: "orders@shop.example", Subject: "Your receipt", Tags: map[string]string{"kind": "receipt"}}
	ev := mailroom.NewEmailEvent(m, r, typ, at)
	stored := *ev
	stored.Data, stored.Email = ev.Email.JSON(), nil
	body, err := NewPayload(&stored)
	if err != nil {
		t.Fatal(err)
	}
	var out map[string]any
	if err := json.Unmarshal(body, &out); err != nil {
		t.Fatal(err)
	}
	data := out["data"].(map[string]any)
	want := map[string]any{"email_id": m.ID, "created_at": "2026-03-01T09:30:00.123Z", "from": "orders@shop.example",
		"to": []any{"ann@example.net"}, "subject": "Your receipt", "tags": map[string]any{"kind": "receipt"}}
	for k, v := range want {
		if !reflect.DeepEqual(data[k], v) {
			t.Errorf("%s: data.%s = %#v, want %#v", typ, k, data[k], v)
		}
	}
	if out["created_at"] != at.UTC().Format("2006-01-02T15:04:05.000Z") {
		t.Errorf("%s: created_at %v", typ, out["created_at"])
	}
	// The event made in memory (Email set, no JSON yet) renders the same.
	direct, err := NewPayload(ev)
	if err != nil || string(direct) != string(body) {
		t.Errorf("%s: rendered from memory as %s (%v), from storage as %s", typ, direct, err, body)
	}
	return out
}

// Each of Mailroom's email events reaches a Resend endpoint under
// Resend's name, with Resend's data and, for bounced, failed and
// suppressed, the object Resend's SDK types give it.
func TestPayloadPerEvent(t *testing.T) {
	at := time.Date(2026, 3, 1, 9, 31, 2, 5e6, time.UTC)
	plain := &mailroom.Recipient{Address: "ann@example.net"}
	for _, tc := range []struct {
		typ, name string
		r         *mailroom.Recipient
		extra     string // the one object beside the base data, "" for none
		want      map[string]any
	}{
		{mailroom.EventEmailQueued, "email.sent", plain, "", nil},
		{mailroom.EventEmailScheduled, "email.scheduled", plain, "", nil},
		{mailroom.EventEmailDelivered, "email.delivered", &mailroom.Recipient{Address: "ann@example.net", SMTPCode: 250, SMTPResponse: "2.0.0 ok"}, "", nil},
		{mailroom.EventEmailDeferred, "email.delivery_delayed", &mailroom.Recipient{Address: "ann@example.net", SMTPCode: 451, SMTPResponse: "4.3.0 later"}, "", nil},
		{mailroom.EventEmailComplained, "email.complained", plain, "", nil},
		{mailroom.EventEmailCanceled, "email.canceled", plain, "", nil},
		{mailroom.EventEmailBounced, "email.bounced", &mailroom.Recipient{Address: "ann@example.net", SMTPCode: 550, SMTPResponse: "5.1.1 no such user"},
			"bounce", map[string]any{"type": "Permanent", "subType": "NoEmail", "message": "5.1.1 no such user"}},
		{mailroom.EventEmailBounced, "email.bounced", &mailroom.Recipient{Address: "ann@example.net", SMTPCode: 552, SMTPResponse: "5.2.2 mailbox full"},
			"bounce", map[string]any{"type": "Transient", "subType": "MailboxFull", "message": "5.2.2 mailbox full"}},
		{mailroom.EventEmailBounced, "email.bounced", &mailroom.Recipient{Address: "ann@example.net", SMTPCode: 554, SMTPResponse: "5.7.1 refused by policy"},
			"bounce", map[string]any{"type": "Transient", "subType": "General", "message": "5.7.1 refused by policy"}},
		{mailroom.EventEmailFailed, "email.failed", &mailroom.Recipient{Address: "ann@example.net", SMTPCode: 452, SMTPResponse: "4.2.2 mailbox full", LastDeferralReason: mailroom.DeferTemporary},
			"failed", map[string]any{"reason": "4.2.2 mailbox full"}},
		{mailroom.EventEmailFailed, "email.failed", &mailroom.Recipient{Address: "ann@example.net", LastDeferralReason: mailroom.DeferConnection},
			"failed", map[string]any{"reason": "Mailroom gave up after retrying; the last attempt was deferred (connection)."}},
		{mailroom.EventEmailSuppressed, "email.suppressed", plain,
			"suppressed", map[string]any{"type": "OnAccountSuppressionList", "message": "Mailroom did not send to this address: it is on the account's suppression list (a past hard bounce, a complaint, an unsubscribe or an entry added through the API)."}},
	} {
		out := payloadOf(t, tc.typ, tc.r, at)
		if out["type"] != tc.name {
			t.Errorf("%s is sent as %v, want %s", tc.typ, out["type"], tc.name)
		}
		data := out["data"].(map[string]any)
		for _, obj := range []string{"bounce", "failed", "suppressed"} {
			got, has := data[obj]
			switch {
			case obj == tc.extra && !reflect.DeepEqual(got, tc.want):
				t.Errorf("%s (%s): data.%s = %#v, want %#v", tc.name, tc.r.SMTPResponse, obj, got, tc.want)
			case obj != tc.extra && has:
				t.Errorf("%s: data.%s = %#v, want none", tc.name, obj, got)
			}
		}
		if len(out) != 3 {
			t.Errorf("%s: the body has %d members, want type, created_at, data: %v", tc.name, len(out), out)
		}
	}
}

// A bounce a report brought later (a DSN) says the report's text.
func TestPayloadAsyncBounceSaysTheReport(t *testing.T) {
	m := &mailroom.MessageSummary{ID: mailroom.NewID(mailroom.PrefixMessage, time.Now()), From: "a@shop.example"}
	ev := mailroom.NewEmailEvent(m, &mailroom.Recipient{Address: "ann@example.net", SMTPCode: 550, SMTPResponse: "5.1.1"}, mailroom.EventEmailBounced, time.Now())
	ev.Email.Async, ev.Email.ReportText = true, "The mailbox ann does not exist here."
	body, err := NewPayload(ev)
	if err != nil {
		t.Fatal(err)
	}
	var out struct {
		Data EmailData `json:"data"`
	}
	if err := json.Unmarshal(body, &out); err != nil {
		t.Fatal(err)
	}
	if b := out.Data.Bounce; b == nil || b.Message != "The mailbox ann does not exist here." || b.Type != "Permanent" {
		t.Fatalf("bounce %+v", b)
	}
	if out.Data.Tags == nil {
		t.Error("tags is null, want {}")
	}
}

// Events Resend has no counterpart for keep Mailroom's name and data in
// Resend's envelope.
func TestPayloadOfOtherEvents(t *testing.T) {
	at := time.Date(2026, 3, 1, 9, 31, 2, 0, time.UTC)
	for _, typ := range []string{mailroom.EventWebhookTest, mailroom.EventDomainVerified} {
		ev, err := mailroom.NewEvent("acct_x", typ, map[string]string{"webhookId": "wh_x"}, at)
		if err != nil {
			t.Fatal(err)
		}
		body, err := NewPayload(ev)
		if err != nil {
			t.Fatal(err)
		}
		want := `{"type":"` + typ + `","created_at":"2026-03-01T09:31:02.000Z","data":{"webhookId":"wh_x"}}`
		if string(body) != want {
			t.Errorf("%s: %s, want %s", typ, body, want)
		}
	}
}

// email.clicked reaches a Resend endpoint with Resend's click object
// (ipAddress, link, timestamp, userAgent), the address truncated as
// Mailroom keeps it; email.opened with the email's data alone. Neither
// carries Mailroom's own names (url, ip, machine).
func TestPayloadOfEngagement(t *testing.T) {
	accepted := time.Date(2026, 3, 1, 9, 30, 0, 0, time.UTC)
	at := time.Date(2026, 3, 1, 9, 40, 0, 250e6, time.UTC)
	m := &mailroom.MessageSummary{ID: mailroom.NewID(mailroom.PrefixMessage, accepted), AccountID: "acct_x",
		From: "orders@shop.example", Subject: "Your receipt", Tracking: mailroom.Tracking{Opens: true, Clicks: true}}
	r := &mailroom.Recipient{Address: "ann@example.net", Status: mailroom.RecipientDelivered, Attempts: 1, LastAttemptAt: &accepted}
	render := func(hit *mailroom.EngagementHit) map[string]any {
		ev := mailroom.NewEngagementEvent(m, r, hit)
		stored := *ev
		stored.Data, stored.Email = ev.Email.JSON(), nil
		body, err := NewPayload(&stored)
		if err != nil {
			t.Fatal(err)
		}
		direct, err := NewPayload(ev)
		if err != nil || string(direct) != string(body) {
			t.Errorf("rendered from memory as %s (%v), from storage as %s", direct, err, body)
		}
		var out map[string]any
		if err := json.Unmarshal(body, &out); err != nil {
			t.Fatal(err)
		}
		return out
	}
	link := "https://shop.example/o?id=1&x=ü#top"
	clicked := render(&mailroom.EngagementHit{Type: mailroom.EventEmailClicked, MessageID: m.ID, Recipient: r.Address,
		URL: link, UserAgent: "Mozilla/5.0", IP: "192.0.2.0", At: at})
	data := clicked["data"].(map[string]any)
	want := map[string]any{"ipAddress": "192.0.2.0", "link": link, "timestamp": "2026-03-01T09:40:00.250Z", "userAgent": "Mozilla/5.0"}
	if clicked["type"] != "email.clicked" || !reflect.DeepEqual(data["click"], want) || data["email_id"] != m.ID {
		t.Errorf("email.clicked: %v", clicked)
	}
	opened := render(&mailroom.EngagementHit{Type: mailroom.EventEmailOpened, MessageID: m.ID, Recipient: r.Address,
		UserAgent: "GoogleImageProxy", IP: "2001:db8:1::", Machine: true, At: at})
	data = opened["data"].(map[string]any)
	if opened["type"] != "email.opened" || data["email_id"] != m.ID || !reflect.DeepEqual(data["to"], []any{"ann@example.net"}) {
		t.Errorf("email.opened: %v", opened)
	}
	for _, d := range []map[string]any{clicked["data"].(map[string]any), data} {
		for _, own := range []string{"url", "ip", "machine", "userAgent", "bounce"} {
			if _, has := d[own]; has {
				t.Errorf("%s in Resend's data: %v", own, d)
			}
		}
	}
	if _, has := data["click"]; has {
		t.Errorf("email.opened has a click: %v", data)
	}
}
