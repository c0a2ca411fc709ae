package http_test

import (
	"strings"
	"testing"
	"time"

	"github.com/mailroom/mailroom"
	"github.com/mailroom/mailroom/apitest"
	"github.com/mailroom/mailroom/storetest"
)

// sendOne sends a plain message to rcpt and returns its id.
func (e *env) sendOne(t *testing.T, rcpt string) string {
	t.Helper()
	r := e.send(t, map[string]any{"from": "orders@shop.example", "to": rcpt, "subject": "Hello", "text": "Hi"})
	if r.Status != 200 {
		t.Fatalf("send: %d %s", r.Status, r.Body)
	}
	return r.Str("messageId")
}

func recipient0(m map[string]any) map[string]any { return m["recipients"].([]any)[0].(map[string]any) }

func eventList(m map[string]any) []string {
	var out []string
	for _, e := range m["events"].([]any) {
		out = append(out, e.(map[string]any)["type"].(string))
	}
	return out
}

func TestDeliveryOutcomes(t *testing.T) {
	storetest.Each(t, func(t *testing.T, eng storetest.Engine) {
		e := newEnv(t, eng)
		e.verifiedDomain(t, "shop.example")
		e.mailDomain("example.net")

		t.Run("4xx then 250 is delivered after a retry", func(t *testing.T) {
			e.mx.ReplyOnce("busy@example.net", 451, "4.3.0", "try again later")
			id := e.sendOne(t, "busy@example.net")
			m := e.waitStatus(t, id, "deferred")
			rec := recipient0(m)
			if rec["attempts"] != float64(1) || rec["smtpCode"] != float64(451) || rec["nextAttemptAt"] == nil {
				t.Fatalf("after the 451: %v", rec)
			}
			e.clock.Advance(2 * time.Minute) // past the first retry delay (1 min ± 20%)
			e.deliver.Wake()
			m = e.waitStatus(t, id, "delivered")
			if rec := recipient0(m); rec["attempts"] != float64(2) {
				t.Fatalf("delivered after %v attempts, want 2", rec["attempts"])
			}
			if got := eventList(m); len(got) != 3 || got[1] != mailroom.EventEmailDeferred || got[2] != mailroom.EventEmailDelivered {
				t.Fatalf("timeline %v", got)
			}
		})

		t.Run("5xx bounces and suppresses the address", func(t *testing.T) {
			e.mx.Reply("gone@example.net", 550, "5.1.1", "no such user")
			id := e.sendOne(t, "gone@example.net")
			m := e.waitStatus(t, id, "bounced")
			if rec := recipient0(m); rec["smtpCode"] != float64(550) {
				t.Fatalf("bounce: %v", rec)
			}
			r := e.Do(apitest.Request{Method: "GET", Path: "/v1/suppressions/Gone@example.net", Key: e.admin})
			if r.Status != 200 || r.Str("reason") != "hard_bounce" || r.Str("messageId") != id {
				t.Fatalf("suppression: %d %s", r.Status, r.Body)
			}
			// The next send is accepted, not attempted, and logged suppressed.
			before := len(e.mx.Messages())
			id2 := e.sendOne(t, "gone@example.net")
			m = e.waitStatus(t, id2, "suppressed")
			if got := eventList(m); len(got) != 1 || got[0] != mailroom.EventEmailSuppressed {
				t.Fatalf("timeline %v", got)
			}
			if len(e.mx.Messages()) != before {
				t.Fatal("a suppressed address was attempted")
			}
		})

		t.Run("a reply in Latin-1 is recorded, not retried forever", func(t *testing.T) {
			e.mx.Reply("latin@example.net", 550, "5.7.1", "refus\xe9 par la politique\x00")
			id := e.sendOne(t, "latin@example.net")
			m := e.waitStatus(t, id, "bounced")
			if resp, _ := recipient0(m)["smtpResponse"].(string); !strings.Contains(resp, "refus\uFFFD par la politique") {
				t.Fatalf("smtpResponse %q", resp)
			}
		})

		t.Run("a connection dropped mid-DATA is retried", func(t *testing.T) {
			e.mx.DropDuringData(1)
			id := e.sendOne(t, "dropped@example.net")
			e.waitStatus(t, id, "deferred")
			e.clock.Advance(2 * time.Minute)
			e.deliver.Wake()
			e.waitStatus(t, id, "delivered")
		})

		t.Run("deferred past the retry window fails", func(t *testing.T) {
			e.mx.Reply("full@example.net", 452, "4.2.2", "mailbox full")
			id := e.sendOne(t, "full@example.net")
			e.waitStatus(t, id, "deferred")
			e.clock.Advance(73 * time.Hour)
			e.deliver.Wake()
			m := e.waitStatus(t, id, "failed")
			if got := eventList(m); got[len(got)-1] != mailroom.EventEmailFailed {
				t.Fatalf("timeline %v", got)
			}
		})
	})
}

func TestSuppressionRoutes(t *testing.T) {
	e := newEnv(t, storetest.SQLite)
	add := func(addr string) *apitest.Response {
		return e.Do(apitest.Request{Method: "POST", Path: "/v1/suppressions", Key: e.admin, Body: map[string]string{"address": addr}})
	}
	if r := add("Someone@Example.net"); r.Status != 201 || r.Str("reason") != "manual" || r.Str("address") != "someone@example.net" {
		t.Fatalf("add: %d %s", r.Status, r.Body)
	}
	if r := add("someone@example.net"); r.Status != 200 {
		t.Fatalf("adding again: %d %s", r.Status, r.Body)
	}
	wantError(t, add("not an address"), 400, mailroom.ECodeValidation)
	if l := e.Do(apitest.Request{Method: "GET", Path: "/v1/suppressions", Key: e.admin}).Map()["data"].([]any); len(l) != 1 {
		t.Fatalf("list: %v", l)
	}
	other := e.newKey(t, storetest.NewAccount(t, e.store, "globex"), mailroom.Scopes{mailroom.ScopeSend})
	wantError(t, e.Do(apitest.Request{Method: "GET", Path: "/v1/suppressions/someone@example.net", Key: other}), 404, mailroom.ECodeNotFound)
	if r := e.Do(apitest.Request{Method: "DELETE", Path: "/v1/suppressions/someone@example.net", Key: e.admin}); r.Status != 204 {
		t.Fatalf("delete: %d %s", r.Status, r.Body)
	}
	wantError(t, e.Do(apitest.Request{Method: "GET", Path: "/v1/suppressions/someone@example.net", Key: e.admin}), 404, mailroom.ECodeNotFound)
}

func TestMessageLogFilters(t *testing.T) {
	e := newEnv(t, storetest.SQLite)
	e.verifiedDomain(t, "shop.example")
	e.mailDomain("example.net")
	e.send(t, map[string]any{"from": "orders@shop.example", "to": "a@example.net", "subject": "A", "text": "a", "tags": map[string]string{"kind": "receipt"}})
	e.send(t, map[string]any{"from": "news@shop.example", "to": "b@example.net", "subject": "B", "text": "b", "category": "marketing"})
	count := func(q string) int {
		t.Helper()
		r := e.Do(apitest.Request{Method: "GET", Path: "/v1/messages?" + q, Key: e.admin})
		if r.Status != 200 {
			t.Fatalf("%s: %d %s", q, r.Status, r.Body)
		}
		return len(r.Map()["data"].([]any))
	}
	for q, want := range map[string]int{"": 2, "to=a@example.net": 1, "from=news@shop.example": 1, "tag=kind:receipt": 1,
		"category=marketing": 1, "since=2000-01-01T00:00:00Z": 2, "until=2000-01-01T00:00:00Z": 0} {
		if got := count(q); got != want {
			t.Errorf("%q: %d messages, want %d", q, got, want)
		}
	}
	for _, q := range []string{"status=sent", "since=yesterday", "tag=nocolon", "to=not-an-address", "category=x"} {
		wantError(t, e.Do(apitest.Request{Method: "GET", Path: "/v1/messages?" + q, Key: e.admin}), 400, mailroom.ECodeValidation)
	}
}

// A message's signed bytes stay readable (and sendable) after its sending
// domain is removed: they were signed while it existed.
func TestRawOutlivesItsDomain(t *testing.T) {
	e := newEnv(t, storetest.SQLite)
	e.verifiedDomain(t, "shop.example")
	e.mailDomain("example.net")
	id := e.sendOne(t, "ann@example.net")
	e.waitStatus(t, id, "delivered")
	before := e.Do(apitest.Request{Method: "GET", Path: "/v1/messages/" + id + "/raw", Key: e.admin})
	if r := e.domainCall(t, "DELETE", "/v1/domains/shop.example", e.admin, nil); r.Status != 204 {
		t.Fatalf("delete domain: %d", r.Status)
	}
	after := e.Do(apitest.Request{Method: "GET", Path: "/v1/messages/" + id + "/raw", Key: e.admin})
	if after.Status != 200 || string(after.Body) != string(before.Body) {
		t.Fatalf("raw after the domain was removed: %d %.60s", after.Status, after.Body)
	}
}
