package receiving

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/mailroom/mailroom"
)

// The event's receivedAt is to the second, as GET /v1/received shows it,
// and names no attachment bytes.
func TestEventDataMatchesTheAPI(t *testing.T) {
	m := &mailroom.ReceivedMessage{ID: "rcv_1", ReceivedAt: time.Date(2026, 11, 29, 1, 40, 23, 323140936, time.UTC),
		Attachments: []mailroom.ReceivedAttachment{{ID: "att_1", Filename: "a.pdf", Size: 3, Content: []byte("SECRETBYTES")}}}
	b, err := json.Marshal(eventData(m))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), `"receivedAt":"2026-11-29T01:40:23Z"`) || strings.Contains(string(b), "U0VDUkVUQllURVM") || strings.Contains(string(b), "SECRETBYTES") {
		t.Errorf("event data %s", b)
	}
}
