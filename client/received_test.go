package client

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/mailroom/mailroom/client/api"
)

// An email.received webhook's data decodes into ReceivedEventData, the
// shape the service's events carry; another event's data does not.
func TestReceivedEventData(t *testing.T) {
	body := `{"type":"email.received","timestamp":"2026-11-29T10:00:00.123Z","data":{"receivedId":"rcv_01","from":"Ann <ann@sender.example>",` +
		`"to":["in@in.example"],"cc":[],"recipients":["in+t@in.example"],"subject":"hi","messageId":"<1@sender.example>",` +
		`"receivedAt":"2026-11-29T10:00:00Z","authentication":{"spf":"pass","dkim":"fail","dmarc":"fail","dkimSignatures":[]},` +
		`"attachments":[{"id":"att_1","filename":"a.pdf","contentType":"application/pdf","size":4}]}}`
	var e api.Event
	if err := json.Unmarshal([]byte(body), &e); err != nil {
		t.Fatal(err)
	}
	d, err := e.ReceivedData()
	if err != nil {
		t.Fatal(err)
	}
	if d.ReceivedID != "rcv_01" || d.Recipients[0] != "in+t@in.example" || d.Authentication.DMARC != AuthFail ||
		len(d.Attachments) != 1 || d.Attachments[0].Size != 4 || !d.ReceivedAt.Equal(time.Date(2026, 11, 29, 10, 0, 0, 0, time.UTC)) {
		t.Errorf("data %+v", d)
	}
	e.Type = EventEmailDelivered
	if _, err := e.ReceivedData(); err == nil {
		t.Error("an email.delivered event decoded as email.received")
	}
}
