package resend_test

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/mailroom/mailroom"
	"github.com/mailroom/mailroom/resend"
)

// A Resend-format endpoint subscribes to email.received by Resend's name
// and is sent Resend's received-email data (docs/api.md "Moving from
// Resend"), not an email event's.
func TestReceivedEventInResendShape(t *testing.T) {
	types, err := resend.EventTypes([]string{"email.received"})
	if err != nil || len(types) != 1 || types[0] != mailroom.EventEmailReceived {
		t.Fatalf("subscription to email.received: %v %v", types, err)
	}
	at := time.Date(2026, 11, 29, 10, 0, 0, 512e6, time.UTC)
	ev, err := mailroom.NewEvent("acct_1", mailroom.EventEmailReceived, mailroom.ReceivedEventData{
		ReceivedID: "rcv_1", From: "Ann <ann@sender.test>", To: []string{"support@in.example"}, Recipients: []string{"support+x@in.example"},
		Subject: "Help", MessageID: "<1@sender.test>", ReceivedAt: at,
		Authentication: mailroom.ReceivedAuthentication{SPF: mailroom.AuthPass, DKIM: mailroom.AuthFail, DMARC: mailroom.AuthFail},
		Attachments: []mailroom.ReceivedAttachment{
			{ID: "att_1", Filename: "a.pdf", ContentType: "application/pdf", Size: 10},
			{ID: "att_2", Filename: "logo.png", ContentType: "image/png", Size: 20, ContentID: "logo@sender.test"},
		},
	}, at)
	if err != nil {
		t.Fatal(err)
	}
	body, err := resend.NewPayload(ev)
	if err != nil {
		t.Fatal(err)
	}
	var got struct {
		Type string `json:"type"`
		Data struct {
			EmailID     string   `json:"email_id"`
			CreatedAt   string   `json:"created_at"`
			From        string   `json:"from"`
			To          []string `json:"to"`
			Cc          []string `json:"cc"`
			Bcc         []string `json:"bcc"`
			MessageID   string   `json:"message_id"`
			Subject     string   `json:"subject"`
			Attachments []struct {
				ID                 string `json:"id"`
				ContentType        string `json:"content_type"`
				ContentDisposition string `json:"content_disposition"`
				ContentID          string `json:"content_id"`
			} `json:"attachments"`
			Authentication struct{ DMARC string } `json:"authentication"`
		} `json:"data"`
	}
	if err := json.Unmarshal(body, &got); err != nil {
		t.Fatal(err)
	}
	d := got.Data
	if got.Type != "email.received" || d.EmailID != "rcv_1" || d.CreatedAt != "2026-11-29T10:00:00.512Z" || d.From != "Ann <ann@sender.test>" ||
		len(d.To) != 1 || d.Cc == nil || d.Bcc == nil || d.MessageID != "<1@sender.test>" || d.Subject != "Help" || d.Authentication.DMARC != "fail" {
		t.Fatalf("payload %s", body)
	}
	if len(d.Attachments) != 2 || d.Attachments[0].ContentDisposition != "attachment" ||
		d.Attachments[1].ContentDisposition != "inline" || d.Attachments[1].ContentID != "logo@sender.test" {
		t.Fatalf("attachments in %s", body)
	}
}
