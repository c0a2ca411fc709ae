package e2e

import (
	"fmt"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mailroom/mailroom/apitest"
	"github.com/mailroom/mailroom/poll"
	"github.com/mailroom/mailroom/smtp/smtptest"
	"github.com/mailroom/mailroom/storetest"
)

// SIGKILL while accepting and delivering at full speed (the receiver
// answers at once, so that outcomes come faster than single commits would
// take them and wait in the group commit), then restart with the default
// 15-minute lease: every message that got a 200 is delivered, within 60 s of
// the restart on SQLite (the new process releases every claim left from
// before) and within 2 minutes on PostgreSQL (the dead node's heartbeat goes
// stale and its claims are released), and only what was inside its SMTP
// exchanges at the kill arrives twice (docs/api.md "After a crash"): no more
// duplicates than the receiver saw transactions in progress when the node's
// connections were cut, at most one per connection, since a connection
// begins its next transaction only once the last one's outcome is written.
func TestKillNineLosesNothing(t *testing.T) {
	storetest.Each(t, func(t *testing.T, eng storetest.Engine) {
		w := newWorld(t)
		node, key, restart := w.startAcmeNode(t, eng)

		// Senders run until the kill; each remembers what got a 200.
		f := startFlood(t, node.base, node, key)
		if !poll.Within(60*time.Second, func() bool { return f.count() >= 1000 && len(w.mx.Messages()) >= 500 }) {
			f.end()
			t.Fatalf("the flood did not get going: %d accepted, %d received", f.count(), len(w.mx.Messages()))
		}
		killed := time.Now()
		node.stop(syscall.SIGKILL)
		received := len(w.mx.Messages())
		f.end()
		accepted := f.accepted
		// Every connection of the dead node ends; each one's transaction
		// begun and not moved past is what may have been in progress.
		w.mx.WaitStats(t, 10*time.Second, func(s smtptest.Stats) bool { return s.Open == 0 })
		inFlight := w.mx.CutTransactions(killed)

		again := restart()
		within := 60 * time.Second
		if eng.Name == "postgres" {
			within = 2 * time.Minute
		} else if !strings.Contains(again.Stderr(), "released the claims left by the previous run") {
			t.Errorf("the restarted node did not release the claims left by the kill:\n%s", again.Stderr())
		}
		w.waitAllArrived(t, accepted, within, "of the restart")
		// Every accepted message is in the log.
		for id := range accepted {
			if r := again.client.Do(apitest.Request{Method: "GET", Path: "/v1/messages/" + id, Key: key}); r.Status != 200 {
				t.Fatalf("accepted message %s is not in the log: %d", id, r.Status)
			}
		}
		dups := 0
		for _, n := range w.receivedByMessageID() {
			dups += max(0, n-1)
		}
		t.Logf("%s: %d accepted, %d received before the kill, %d delivered twice, %d transactions in progress at the kill",
			eng.Name, len(accepted), received, dups, inFlight)
		if dups > inFlight {
			t.Errorf("%d messages arrived twice, more than the %d transactions in progress at the kill", dups, inFlight)
		}
	})
}

// messageIDHeader is the Message-ID a message id is sent with.
func messageIDHeader(id string) string { return "<" + id[len("msg_"):] + "@shop.example>" }

// trySend sends message i and returns the status (0 when the connection
// failed) and the message id.
func trySend(c *apitest.Client, key string, i int64) (int, string) {
	defer func() { _ = recover() }()
	r := c.Do(apitest.Request{Method: "POST", Path: "/v1/send", Key: key, Body: map[string]any{
		"from": "orders@shop.example", "to": fmt.Sprintf("r%d@example.net", i), "subject": "Order", "text": "Thanks",
		"idempotencyKey": fmt.Sprint("order-", i)}})
	return r.Status, r.Str("messageId")
}

// tryBatch sends messages first..first+n-1 as one batch and returns the
// status and the ids of the items it accepted.
func tryBatch(c *apitest.Client, key string, first, n int64) (status int, ids []string) {
	defer func() { _ = recover() }()
	items := make([]any, n)
	for i := range n {
		items[i] = map[string]any{"from": "orders@shop.example", "to": fmt.Sprintf("r%d@example.net", first+i),
			"subject": "Order", "text": "Thanks", "idempotencyKey": fmt.Sprint("order-", first+i)}
	}
	r := c.Do(apitest.Request{Method: "POST", Path: "/v1/send/batch", Key: key, Body: map[string]any{"messages": items}})
	if r.Status == 200 {
		for _, d := range r.Map()["data"].([]any) {
			if id, ok := d.(map[string]any)["messageId"].(string); ok {
				ids = append(ids, id)
			}
		}
	}
	return r.Status, ids
}

// quietT turns the client's fatal errors (the server dying mid-request)
// into panics that trySend recovers, instead of failing the test.
type quietT struct{ *testing.T }

func (q quietT) Fatalf(format string, args ...any) { panic(fmt.Sprintf(format, args...)) }
func (q quietT) Errorf(format string, args ...any) {}
func (q quietT) Helper()                           {}
