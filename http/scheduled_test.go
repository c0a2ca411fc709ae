package http_test

import (
	"bytes"
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mailroom/mailroom"
	"github.com/mailroom/mailroom/apitest"
	"github.com/mailroom/mailroom/client/api"
	"github.com/mailroom/mailroom/storetest"
)

// rfc3339 formats a time of the test clock as a client would send it.
func rfc3339(t time.Time) string { return t.UTC().Format(time.RFC3339) }

// notDue fails unless a claim now finds nothing due: what the running
// deliverer would take at this moment, asked directly instead of waiting
// for its next poll.
func (e *env) notDue(t *testing.T) {
	t.Helper()
	if n, err := e.deliver.DeliverDue(context.Background()); err != nil || n != 0 {
		t.Fatalf("a claim found %d recipients due (err %v), want none", n, err)
	}
}

func (e *env) scheduledSend(t *testing.T, at time.Time, to string, extra map[string]any) string {
	t.Helper()
	body := map[string]any{"from": "orders@shop.example", "to": to, "subject": "Later", "text": "Hello from the past",
		"scheduledAt": rfc3339(at)}
	for k, v := range extra {
		body[k] = v
	}
	r := e.send(t, body)
	if r.Status != 200 || r.Str("status") != "scheduled" {
		t.Fatalf("scheduled send: %d %s", r.Status, r.Body)
	}
	return r.Str("messageId")
}

func TestScheduledSendGoesOutAtItsTime(t *testing.T) {
	storetest.Each(t, func(t *testing.T, eng storetest.Engine) {
		e := newEnv(t, eng)
		e.verifiedDomain(t, "shop.example")
		e.mailDomain("example.net")
		at := e.clock.Now().Add(time.Hour).Truncate(time.Second)
		id := e.scheduledSend(t, at, "ann@example.net", nil)

		msg := e.Do(apitest.Request{Method: "GET", Path: "/v1/messages/" + id, Key: e.admin}).Map()
		rcpt := msg["recipients"].([]any)[0].(map[string]any)
		if msg["status"] != "scheduled" || msg["scheduledAt"] != rfc3339(at) || rcpt["status"] != "queued" || rcpt["nextAttemptAt"] != rfc3339(at) {
			t.Fatalf("scheduled message in the log: %v", msg)
		}
		if got := eventList(msg); strings.Join(got, ",") != "email.scheduled" {
			t.Errorf("events %v, want email.scheduled", got)
		}
		raw := e.Do(apitest.Request{Method: "GET", Path: "/v1/messages/" + id + "/raw", Key: e.admin})
		wantError(t, raw, 409, "invalid_state")
		if !strings.Contains(raw.Str("message"), rfc3339(at)) {
			t.Errorf("raw refusal does not say when: %s", raw.Body)
		}
		list := e.Do(apitest.Request{Method: "GET", Path: "/v1/scheduled", Key: e.admin}).Map()["data"].([]any)
		if len(list) != 1 || list[0].(map[string]any)["id"] != id {
			t.Errorf("GET /v1/scheduled: %v", list)
		}

		e.clock.Advance(time.Hour - 2*time.Second)
		e.notDue(t)
		if n := len(e.mx.Messages()); n != 0 {
			t.Fatalf("%d messages arrived before the scheduled time", n)
		}
		e.clock.Advance(3 * time.Second)
		msg = e.waitStatus(t, id, "delivered")
		if got := strings.Join(eventList(msg), ","); got != "email.scheduled,email.queued,email.delivered" {
			t.Errorf("timeline %s", got)
		}
		got := e.mx.WaitMessages(t, 1, 10*time.Second)
		if len(got) != 1 || !strings.Contains(string(got[0].Data), "Hello from the past") {
			t.Fatalf("received %d messages", len(got))
		}
		raw = e.Do(apitest.Request{Method: "GET", Path: "/v1/messages/" + id + "/raw", Key: e.admin})
		if raw.Status != 200 || !bytes.Equal(raw.Body, got[0].Data) {
			t.Errorf("raw after sending: %d, %q differs from what was received: %q", raw.Status, raw.Body, got[0].Data)
		}
		if list := e.Do(apitest.Request{Method: "GET", Path: "/v1/scheduled", Key: e.admin}).Map()["data"].([]any); len(list) != 0 {
			t.Errorf("a sent message is still listed as scheduled: %v", list)
		}
	})
}

func TestScheduledAtBounds(t *testing.T) {
	storetest.Each(t, func(t *testing.T, eng storetest.Engine) {
		e := newEnv(t, eng)
		e.verifiedDomain(t, "shop.example")
		now := e.clock.Now()
		for _, at := range []time.Time{now.Add(31 * 24 * time.Hour), now.Add(-10 * time.Minute)} {
			r := e.send(t, map[string]any{"from": "orders@shop.example", "to": "a@example.net", "subject": "s", "text": "t",
				"scheduledAt": rfc3339(at)})
			wantError(t, r, 400, "validation_error")
			if !hasField(r, "scheduledAt") {
				t.Errorf("%s: details do not name scheduledAt: %s", at, r.Body)
			}
		}
		e.noMessages(t)
		// Within the grace period the time counts as now: queued, not scheduled.
		r := e.send(t, map[string]any{"from": "orders@shop.example", "to": "a@example.net", "subject": "s", "text": "t",
			"scheduledAt": rfc3339(now.Add(-30 * time.Second))})
		if r.Status != 200 || r.Str("status") != "queued" {
			t.Errorf("30 s in the past: %d %s, want queued", r.Status, r.Body)
		}
	})
}

func TestRescheduleAndCancel(t *testing.T) {
	storetest.Each(t, func(t *testing.T, eng storetest.Engine) {
		e := newEnv(t, eng)
		e.verifiedDomain(t, "shop.example")
		e.mailDomain("example.net")
		now := e.clock.Now()
		moved := e.scheduledSend(t, now.Add(time.Hour), "moved@example.net", nil)
		canceled := e.scheduledSend(t, now.Add(time.Hour), "canceled@example.net", map[string]any{"cc": "cc@example.net"})

		later := now.Add(2 * time.Hour).Truncate(time.Second)
		r := e.Do(apitest.Request{Method: "PATCH", Path: "/v1/scheduled/" + moved, Key: e.admin, Body: map[string]any{"scheduledAt": rfc3339(later)}})
		if m := apitest.Decode[api.Message](r); r.Status != 200 || m.ScheduledAt == nil || !m.ScheduledAt.Equal(later) || m.Status != api.MessageScheduled {
			t.Fatalf("reschedule: %d %s", r.Status, r.Body)
		}
		for _, bad := range []map[string]any{{}, {"scheduledAt": rfc3339(now.Add(31 * 24 * time.Hour))}, {"scheduledAt": "soon"}} {
			wantError(t, e.Do(apitest.Request{Method: "PATCH", Path: "/v1/scheduled/" + moved, Key: e.admin, Body: bad}), 400, "validation_error")
		}

		r = e.Do(apitest.Request{Method: "DELETE", Path: "/v1/scheduled/" + canceled, Key: e.admin})
		m := apitest.Decode[api.Message](r)
		if r.Status != 200 || m.Status != api.MessageCanceled || len(m.Recipients) != 2 {
			t.Fatalf("cancel: %d %s", r.Status, r.Body)
		}
		for _, rc := range m.Recipients {
			if rc.Status != api.RecipientCanceled {
				t.Errorf("recipient after cancel: %+v", rc)
			}
		}
		var timeline []api.EventType
		for _, ev := range m.Events {
			timeline = append(timeline, ev.Type)
		}
		if want := []api.EventType{api.EventEmailScheduled, api.EventEmailScheduled, api.EventEmailCanceled, api.EventEmailCanceled}; !slices.Equal(timeline, want) {
			t.Errorf("timeline after cancel: %v", timeline)
		}
		wantError(t, e.Do(apitest.Request{Method: "DELETE", Path: "/v1/scheduled/" + canceled, Key: e.admin}), 409, "invalid_state")
		wantError(t, e.Do(apitest.Request{Method: "PATCH", Path: "/v1/scheduled/" + canceled, Key: e.admin,
			Body: map[string]any{"scheduledAt": rfc3339(later)}}), 409, "invalid_state")
		wantError(t, e.Do(apitest.Request{Method: "GET", Path: "/v1/messages/" + canceled + "/raw", Key: e.admin}), 409, "invalid_state")

		// The old time passes: nothing is due. The new one comes: only the
		// moved message goes out; the canceled one never does.
		e.clock.Advance(time.Hour + time.Minute)
		e.notDue(t)
		e.clock.Advance(time.Hour)
		e.waitStatus(t, moved, "delivered")
		e.clock.Advance(40 * 24 * time.Hour)
		e.notDue(t)
		for _, m := range e.mx.Messages() {
			if strings.Join(m.Rcpts, ",") != "moved@example.net" {
				t.Errorf("received mail for %v", m.Rcpts)
			}
		}
		wantError(t, e.Do(apitest.Request{Method: "DELETE", Path: "/v1/scheduled/" + moved, Key: e.admin}), 409, "invalid_state")
		if st := e.Do(apitest.Request{Method: "GET", Path: "/v1/messages/" + canceled, Key: e.admin}).Str("status"); st != "canceled" {
			t.Errorf("canceled message is %s later", st)
		}
	})
}

func TestScheduledRoutesAreTheAccountsOwn(t *testing.T) {
	storetest.Each(t, func(t *testing.T, eng storetest.Engine) {
		e := newEnv(t, eng)
		e.verifiedDomain(t, "shop.example")
		id := e.scheduledSend(t, e.clock.Now().Add(time.Hour), "ann@example.net", nil)
		other := e.newKey(t, storetest.NewAccount(t, e.store, "other"), mailroom.Scopes(mailroom.AllScopes))
		if list := e.Do(apitest.Request{Method: "GET", Path: "/v1/scheduled", Key: other}).Map()["data"].([]any); len(list) != 0 {
			t.Errorf("another account lists %v", list)
		}
		wantError(t, e.Do(apitest.Request{Method: "PATCH", Path: "/v1/scheduled/" + id, Key: other,
			Body: map[string]any{"scheduledAt": rfc3339(e.clock.Now().Add(2 * time.Hour))}}), 404, "not_found")
		wantError(t, e.Do(apitest.Request{Method: "DELETE", Path: "/v1/scheduled/" + id, Key: other}), 404, "not_found")
		wantError(t, e.Do(apitest.Request{Method: "DELETE", Path: "/v1/scheduled/msg_nosuchmessage", Key: e.admin}), 404, "not_found")
		if st := e.Do(apitest.Request{Method: "GET", Path: "/v1/messages/" + id, Key: e.admin}).Str("status"); st != "scheduled" {
			t.Errorf("after another account's tries the message is %s", st)
		}
	})
}

func TestScheduledSendChecksAgainWhenDue(t *testing.T) {
	storetest.Each(t, func(t *testing.T, eng storetest.Engine) {
		e := newEnv(t, eng)
		e.verifiedDomain(t, "shop.example")
		e.verifiedDomain(t, "gone.example")
		e.mailDomain("example.net")
		at := e.clock.Now().Add(time.Hour)
		kept := e.scheduledSend(t, at, "ann@example.net", map[string]any{"cc": "later-suppressed@example.net"})
		r := e.send(t, map[string]any{"from": "news@gone.example", "to": "bob@example.net", "subject": "s", "text": "t", "scheduledAt": rfc3339(at)})
		orphan := r.Str("messageId")

		if r := e.Do(apitest.Request{Method: "POST", Path: "/v1/suppressions", Key: e.admin,
			Body: map[string]any{"address": "Later-Suppressed@example.net"}}); r.Status != 200 && r.Status != 201 {
			t.Fatalf("suppress: %d %s", r.Status, r.Body)
		}
		if r := e.domainCall(t, "DELETE", "/v1/domains/gone.example", e.admin, nil); r.Status != 204 {
			t.Fatalf("delete domain: %d %s", r.Status, r.Body)
		}
		e.clock.Advance(time.Hour + time.Second)

		msg := e.waitStatus(t, orphan, "failed")
		rcpt := msg["recipients"].([]any)[0].(map[string]any)
		if resp, _ := rcpt["smtpResponse"].(string); !strings.Contains(resp, "gone.example") || !strings.Contains(resp, "removed") {
			t.Errorf("failed recipient does not say why: %v", rcpt)
		}
		if got := strings.Join(eventList(msg), ","); got != "email.scheduled,email.failed" {
			t.Errorf("timeline %s", got)
		}
		msg = e.waitStatus(t, kept, "partially_delivered")
		states := map[string]any{}
		for _, rc := range msg["recipients"].([]any) {
			states[rc.(map[string]any)["address"].(string)] = rc.(map[string]any)["status"]
		}
		if states["ann@example.net"] != "delivered" || states["later-suppressed@example.net"] != "suppressed" {
			t.Errorf("recipients %v", states)
		}
		for _, m := range e.mx.Messages() {
			if strings.Join(m.Rcpts, ",") != "ann@example.net" {
				t.Errorf("mail went to %v", m.Rcpts)
			}
		}
	})
}

func TestScheduledRetriesAndBatches(t *testing.T) {
	storetest.Each(t, func(t *testing.T, eng storetest.Engine) {
		e := newEnv(t, eng)
		e.verifiedDomain(t, "shop.example")
		e.mailDomain("example.net")
		body := map[string]any{"from": "orders@shop.example", "to": "ann@example.net", "subject": "s", "text": "t",
			"scheduledAt": rfc3339(e.clock.Now().Add(10 * time.Second)), "idempotencyKey": "reminder-1"}
		first := e.send(t, body)
		e.clock.Advance(time.Hour)
		e.waitStatus(t, first.Str("messageId"), "delivered")
		// The retry comes after scheduledAt has passed: it is the same send,
		// answered as one, not refused for a time in the past.
		again := e.send(t, body)
		if again.Status != 200 || again.Str("status") != "duplicate" || again.Str("messageId") != first.Str("messageId") {
			t.Errorf("late retry: %d %s", again.Status, again.Body)
		}
		batch := e.batch(t, map[string]any{"messages": []any{body}})
		if d := batchData(t, batch, 1, 0); d[0]["status"] != "duplicate" {
			t.Errorf("late retry in a batch: %v", d[0])
		}
		// A changed request under that key is still refused.
		body["subject"] = "other"
		wantError(t, e.send(t, body), 409, "idempotency_key_reused")

		at := e.clock.Now().Add(time.Hour)
		items := []any{
			map[string]any{"from": "orders@shop.example", "to": "b1@example.net", "subject": "s", "text": "t", "scheduledAt": rfc3339(at)},
			map[string]any{"from": "orders@shop.example", "to": "b2@example.net", "subject": "s", "text": "t"},
		}
		d := batchData(t, e.batch(t, map[string]any{"messages": items}), 2, 0)
		if d[0]["status"] != "scheduled" || d[1]["status"] != "queued" {
			t.Fatalf("batch with a scheduled item: %v", d)
		}
		e.waitStatus(t, d[1]["messageId"].(string), "delivered")
		e.notDue(t)
		e.clock.Advance(time.Hour)
		e.waitStatus(t, d[0]["messageId"].(string), "delivered")
	})
}

// A new time that has come (within the grace period) sends the message
// now, and the answer says so: queued, its email.queued events written.
func TestRescheduleToNowSendsAtOnce(t *testing.T) {
	storetest.Each(t, func(t *testing.T, eng storetest.Engine) {
		e := newEnv(t, eng)
		e.verifiedDomain(t, "shop.example")
		e.mailDomain("example.net")
		id := e.scheduledSend(t, e.clock.Now().Add(time.Hour), "ann@example.net", nil)
		r := e.Do(apitest.Request{Method: "PATCH", Path: "/v1/scheduled/" + id, Key: e.admin,
			Body: map[string]any{"scheduledAt": rfc3339(e.clock.Now().Add(-30 * time.Second))}})
		if r.Status != 200 || r.Str("status") != "queued" || strings.Join(eventList(r.Map()), ",") != "email.scheduled,email.queued" {
			t.Fatalf("reschedule to now: %d %s", r.Status, r.Body)
		}
		if rc := recipient0(r.Map()); rc["status"] != "queued" || rc["nextAttemptAt"] != nil {
			t.Errorf("recipient %v", rc)
		}
		if list := e.Do(apitest.Request{Method: "GET", Path: "/v1/scheduled", Key: e.admin}).Map()["data"].([]any); len(list) != 0 {
			t.Errorf("still listed as scheduled: %v", list)
		}
		wantError(t, e.Do(apitest.Request{Method: "DELETE", Path: "/v1/scheduled/" + id, Key: e.admin}), 409, "invalid_state")
		e.waitStatus(t, id, "delivered")
	})
}
