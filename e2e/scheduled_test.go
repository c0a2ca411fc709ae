package e2e

import (
	"bytes"
	"net/mail"
	"syscall"
	"testing"
	"time"

	"github.com/mailroom/mailroom/apitest"
	"github.com/mailroom/mailroom/poll"
	"github.com/mailroom/mailroom/storetest"
)

// Scheduled sends on the real clock, through the real binary: one due
// while its node is killed (SIGKILL) and down goes out as soon as the node
// is back; one sent to the restarted node is not sent before its time and
// arrives within seconds of it; a canceled one never arrives.
func TestScheduledSendsOnTimeAcrossAKill(t *testing.T) {
	storetest.Each(t, func(t *testing.T, eng storetest.Engine) {
		w := newWorld(t)
		node, key, restart := w.startAcmeNode(t, eng)
		schedule := func(c *apitest.Client, to string, at time.Time) string {
			t.Helper()
			r := c.Do(apitest.Request{Method: "POST", Path: "/v1/send", Key: key, Body: map[string]any{
				"from": "orders@shop.example", "to": to, "subject": "Reminder", "text": "It is time",
				"scheduledAt": at.UTC().Format(time.RFC3339Nano)}})
			if r.Status != 200 || r.Str("status") != "scheduled" {
				t.Fatalf("schedule: %d %s", r.Status, r.Body)
			}
			return r.Str("messageId")
		}

		whileDown := time.Now().Add(3 * time.Second)
		downID := schedule(node.client, "while-down@example.net", whileDown)
		canceledID := schedule(node.client, "canceled@example.net", time.Now().Add(5*time.Second))
		if r := node.client.Do(apitest.Request{Method: "DELETE", Path: "/v1/scheduled/" + canceledID, Key: key}); r.Status != 200 {
			t.Fatalf("cancel: %d %s", r.Status, r.Body)
		}
		node.stop(syscall.SIGKILL)
		for time.Now().Before(whileDown.Add(500 * time.Millisecond)) {
			time.Sleep(50 * time.Millisecond) // the node stays down past the due time
		}

		again := restart()
		onTime := time.Now().Add(6 * time.Second)
		onTimeID := schedule(again.client, "on-time@example.net", onTime)

		arrived := map[string]time.Time{} // by recipient: when the test first saw it
		// Looked at until both arrived, or 15 s past the on-time send's
		// time; what is missing then is reported below.
		poll.Within(time.Until(onTime.Add(15*time.Second)), func() bool {
			for _, m := range w.mx.Messages() {
				for _, rc := range m.Rcpts {
					if _, seen := arrived[rc]; !seen {
						arrived[rc] = time.Now()
						checkDate(t, m.Data, rc, map[string]time.Time{"while-down@example.net": whileDown, "on-time@example.net": onTime}[rc])
					}
				}
			}
			return len(arrived) >= 2
		})
		if at, ok := arrived["on-time@example.net"]; !ok || at.Before(onTime) {
			t.Errorf("the on-time send arrived at %v, scheduled for %v", at, onTime)
		} else {
			t.Logf("on-time send seen %v after its time", at.Sub(onTime).Round(time.Millisecond))
		}
		if _, ok := arrived["while-down@example.net"]; !ok {
			t.Errorf("the send due while the node was down never arrived")
		}
		if _, ok := arrived["canceled@example.net"]; ok {
			t.Errorf("the canceled send arrived")
		}
		for _, id := range []string{downID, onTimeID} {
			if st := again.client.Do(apitest.Request{Method: "GET", Path: "/v1/messages/" + id, Key: key}).Str("status"); st != "delivered" && st != "queued" {
				t.Errorf("message %s is %s", id, st)
			}
		}
		if n := len(w.mx.Messages()); n != 2 {
			t.Errorf("%d messages received, want 2", n)
		}
	})
}

// checkDate fails unless the message's Date is not before its scheduled
// time: it was composed and signed when due, not when accepted.
func checkDate(t *testing.T, data []byte, rcpt string, scheduled time.Time) {
	t.Helper()
	m, err := mail.ReadMessage(bytes.NewReader(data))
	if err != nil {
		t.Fatalf("message for %s: %v", rcpt, err)
	}
	date, err := m.Header.Date()
	if err != nil || date.Before(scheduled.Truncate(time.Second)) {
		t.Errorf("message for %s dated %v (%v), scheduled for %v", rcpt, date, err, scheduled)
	}
}
