package http_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/mail"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mailroom/mailroom"
	"github.com/mailroom/mailroom/apitest"
	"github.com/mailroom/mailroom/storetest"
)

// emailsCall calls one of Resend's email routes with the admin key; the
// answer is checked against the OpenAPI document.
func (e *env) emailsCall(t *testing.T, method, path string, body any) *apitest.Response {
	t.Helper()
	return e.Do(apitest.Request{Method: method, Path: path, Key: e.admin, Body: body})
}

// emptyJSON calls a route without a body but with Content-Type:
// application/json, as Resend's SDKs make GETs and body-less POSTs.
func (e *env) emptyJSON(t *testing.T, method, path, key string) *apitest.Response {
	t.Helper()
	return e.Do(apitest.Request{Method: method, Path: path, Key: key,
		Header: map[string]string{"Content-Type": "application/json"}})
}

func TestResendGetEmail(t *testing.T) {
	storetest.Each(t, func(t *testing.T, eng storetest.Engine) {
		e := newEnv(t, eng)
		e.verifiedDomain(t, "shop.example")
		e.mailDomain("example.net")
		r := e.send(t, map[string]any{
			"from": "Shop <orders@shop.example>", "to": []string{"Ann <ann@example.net>", "bob@example.net"},
			"cc": "carol@example.net", "bcc": "audit@example.net", "replyTo": "help@shop.example",
			"subject": "Your receipt – #42", "html": "<p>Thanks, <b>Ann</b>!</p>", "text": "Thanks, Ann!",
			"tags": map[string]string{"kind": "receipt", "batch": "b7"},
		})
		if r.Status != 200 {
			t.Fatalf("send: %d %s", r.Status, r.Body)
		}
		id := r.Str("messageId")
		logged := e.waitStatus(t, id, "delivered")
		received := e.mx.WaitMessages(t, 1, 10*time.Second)[0]
		header, err := mail.ReadMessage(bytes.NewReader(received.Data))
		if err != nil {
			t.Fatal(err)
		}

		// The SDKs send Content-Type: application/json on a GET too.
		g := e.emptyJSON(t, "GET", "/emails/"+id, e.admin)
		if g.Status != 200 {
			t.Fatalf("GET /emails/%s: %d %s", id, g.Status, g.Body)
		}
		var got map[string]any
		if err := json.Unmarshal(g.Body, &got); err != nil {
			t.Fatal(err)
		}
		want := map[string]any{
			"object": "email", "id": id, "message_id": header.Header.Get("Message-Id"),
			"from": "Shop <orders@shop.example>", "to": []any{"Ann <ann@example.net>", "bob@example.net"},
			"cc": []any{"carol@example.net"}, "bcc": []any{"audit@example.net"}, "reply_to": []any{"help@shop.example"},
			"subject": "Your receipt – #42", "html": "<p>Thanks, <b>Ann</b>!</p>", "text": "Thanks, Ann!",
			"scheduled_at": nil, "last_event": "delivered",
			"tags": []any{map[string]any{"name": "batch", "value": "b7"}, map[string]any{"name": "kind", "value": "receipt"}},
		}
		for k, v := range want {
			if fmt.Sprint(got[k]) != fmt.Sprint(v) {
				t.Errorf("%s: got %v, want %v", k, got[k], v)
			}
		}
		if got["message_id"] == "" || got["message_id"] == nil {
			t.Error("no message_id")
		}
		// created_at is Resend's form (microseconds, +00:00), the log's time.
		created, err := time.Parse(time.RFC3339, got["created_at"].(string))
		if err != nil || !strings.HasSuffix(got["created_at"].(string), "+00:00") ||
			created.Truncate(time.Second).Format(time.RFC3339) != logged["createdAt"] {
			t.Errorf("created_at %v, the log says %v", got["created_at"], logged["createdAt"])
		}

		// What the account cannot see, or what is no message, is not found.
		other := storetest.NewAccount(t, e.store, "globex")
		otherKey := e.newKey(t, other, mailroom.Scopes(mailroom.AllScopes))
		wantResendError(t, e.emptyJSON(t, "GET", "/emails/"+id, otherKey), 404, "not_found")
		wantResendError(t, e.emailsCall(t, "GET", "/emails/"+mailroom.NewID(mailroom.PrefixMessage, time.Now()), nil), 404, "not_found")
		wantResendError(t, e.emailsCall(t, "GET", "/emails/4ef9a417-02e9-4d39-ad75-9611e0fcc33c", nil), 404, "not_found")
	})
}

// TestResendEmailBodiesAbsent: a message without HTML answers html null,
// as Resend does; cc, bcc and reply_to without addresses are null too.
func TestResendEmailBodiesAbsent(t *testing.T) {
	e := newEnv(t, storetest.SQLite)
	e.verifiedDomain(t, "shop.example")
	e.mailDomain("example.net")
	id := e.sendOne(t, "ann@example.net")
	g := e.emailsCall(t, "GET", "/emails/"+id, nil)
	var got map[string]any
	if err := json.Unmarshal(g.Body, &got); err != nil || g.Status != 200 {
		t.Fatalf("%d %s", g.Status, g.Body)
	}
	for _, k := range []string{"html", "cc", "bcc", "reply_to", "scheduled_at"} {
		if v, ok := got[k]; !ok || v != nil {
			t.Errorf("%s: %v (present %v), want null", k, v, ok)
		}
	}
	if got["text"] != "Hi" || fmt.Sprint(got["tags"]) != "[]" {
		t.Errorf("text %v, tags %v", got["text"], got["tags"])
	}
}

type listedEmails struct {
	Object  string `json:"object"`
	HasMore bool   `json:"has_more"`
	Data    []struct {
		ID        string `json:"id"`
		Subject   string `json:"subject"`
		LastEvent string `json:"last_event"`
		HTML      any    `json:"html"`
	} `json:"data"`
}

func (e *env) listEmails(t *testing.T, query string) listedEmails {
	t.Helper()
	r := e.emptyJSON(t, "GET", "/emails"+query, e.admin)
	var out listedEmails
	if err := json.Unmarshal(r.Body, &out); err != nil || r.Status != 200 || out.Object != "list" {
		t.Fatalf("GET /emails%s: %d %s", query, r.Status, r.Body)
	}
	return out
}

func (l listedEmails) ids() []string {
	var out []string
	for _, d := range l.Data {
		out = append(out, d.ID)
	}
	return out
}

// TestResendListEmails pages the log as Resend's SDKs do: newest first,
// after the last id for the next page, before the first id for the page
// before, has_more saying whether that side has more.
func TestResendListEmails(t *testing.T) {
	storetest.Each(t, func(t *testing.T, eng storetest.Engine) {
		e := newEnv(t, eng)
		e.verifiedDomain(t, "shop.example")
		e.mailDomain("example.net")
		var ids []string // newest first
		for i := range 5 {
			r := e.send(t, map[string]any{"from": "orders@shop.example", "to": "ann@example.net", "subject": fmt.Sprintf("n%d", i),
				"html": "<p>big</p>", "scheduledAt": rfc3339(e.clock.Now().Add(time.Hour))})
			if r.Status != 200 {
				t.Fatalf("send: %d %s", r.Status, r.Body)
			}
			ids = append([]string{r.Str("messageId")}, ids...)
		}
		// Another account's mail is never listed.
		other := storetest.NewAccount(t, e.store, "globex")
		if _, err := e.store.AcceptMessage(t.Context(), storetest.NewMessage(other, e.clock.Now(), "x@example.net")); err != nil {
			t.Fatal(err)
		}

		all := e.listEmails(t, "")
		if !slices.Equal(all.ids(), ids) || all.HasMore {
			t.Fatalf("the whole list: %v (has_more %v), want %v", all.ids(), all.HasMore, ids)
		}
		if d := all.Data[0]; d.Subject != "n4" || d.LastEvent != "scheduled" || d.HTML != nil {
			t.Errorf("an item: %+v", d)
		}

		// Forward, two at a time: [0 1] [2 3] [4].
		p1 := e.listEmails(t, "?limit=2")
		p2 := e.listEmails(t, "?limit=2&after="+p1.Data[1].ID)
		p3 := e.listEmails(t, "?limit=2&after="+p2.Data[1].ID)
		if !slices.Equal(p1.ids(), ids[:2]) || !p1.HasMore || !slices.Equal(p2.ids(), ids[2:4]) || !p2.HasMore ||
			!slices.Equal(p3.ids(), ids[4:]) || p3.HasMore {
			t.Fatalf("forward: %v %v, %v %v, %v %v; want %v", p1.ids(), p1.HasMore, p2.ids(), p2.HasMore, p3.ids(), p3.HasMore, ids)
		}
		// Back from the last page: the two just before it, newest first,
		// then the first page, after which there is nothing newer.
		b2 := e.listEmails(t, "?limit=2&before="+p3.Data[0].ID)
		b1 := e.listEmails(t, "?limit=2&before="+b2.Data[0].ID)
		if !slices.Equal(b2.ids(), ids[2:4]) || !b2.HasMore || !slices.Equal(b1.ids(), ids[:2]) || b1.HasMore {
			t.Fatalf("backward: %v %v, %v %v; want %v then %v", b2.ids(), b2.HasMore, b1.ids(), b1.HasMore, ids[2:4], ids[:2])
		}
		// Before the 4th with a limit larger than what is newer: the
		// three newer ones, and no more.
		if b := e.listEmails(t, "?before="+ids[3]); !slices.Equal(b.ids(), ids[:3]) || b.HasMore {
			t.Errorf("before the 4th: %v %v", b.ids(), b.HasMore)
		}
		if a := e.listEmails(t, "?after="+ids[4]); len(a.Data) != 0 || a.HasMore {
			t.Errorf("after the oldest: %v", a.ids())
		}

		for _, c := range []struct{ query, says string }{
			{"?limit=0", "limit"}, {"?limit=101", "limit"}, {"?limit=ten", "limit"},
			{"?after=" + ids[1] + "&before=" + ids[3], "before"},
			{"?after=4ef9a417-02e9-4d39-ad75-9611e0fcc33c", "after"},
			{"?before=nope", "before"},
			{"?limit=2&limit=3", "limit"},
		} {
			wantResendError(t, e.emailsCall(t, "GET", "/emails"+c.query, nil), 422, "validation_error", c.says)
		}
	})
}

func (e *env) lastEvent(t *testing.T, id string) string {
	t.Helper()
	r := e.emailsCall(t, "GET", "/emails/"+id, nil)
	if r.Status != 200 {
		t.Fatalf("GET /emails/%s: %d %s", id, r.Status, r.Body)
	}
	return r.Str("last_event")
}

// TestResendLastEvent: what a message's state reads as, alone and in
// the list.
func TestResendLastEvent(t *testing.T) {
	storetest.Each(t, func(t *testing.T, eng storetest.Engine) {
		e := newEnv(t, eng)
		e.verifiedDomain(t, "shop.example")
		e.mailDomain("example.net")
		want := map[string]string{}

		release := e.mx.Hold("slow@example.net")
		queued := e.sendOne(t, "slow@example.net")
		want[queued] = "queued"
		if got := e.lastEvent(t, queued); got != "queued" {
			t.Errorf("held by the receiver: %s, want queued", got)
		}
		scheduled := e.scheduledSend(t, e.clock.Now().Add(time.Hour), "later@example.net", nil)
		want[scheduled] = "scheduled"
		canceled := e.scheduledSend(t, e.clock.Now().Add(time.Hour), "never@example.net", nil)
		if r := e.emptyJSON(t, "POST", "/emails/"+canceled+"/cancel", e.admin); r.Status != 200 {
			t.Fatalf("cancel: %d %s", r.Status, r.Body)
		}
		want[canceled] = "canceled"
		delivered := e.sendOne(t, "ann@example.net")
		e.waitStatus(t, delivered, "delivered")
		want[delivered] = "delivered"
		e.mx.Reply("gone@example.net", 550, "5.1.1", "no such user")
		bounced := e.sendOne(t, "gone@example.net")
		e.waitStatus(t, bounced, "bounced")
		want[bounced] = "bounced"
		suppressed := e.sendOne(t, "gone@example.net") // suppressed by the bounce
		e.waitStatus(t, suppressed, "suppressed")
		want[suppressed] = "suppressed"
		e.mx.Reply("bob@example.net", 550, "5.1.1", "no such user")
		partly := e.send(t, map[string]any{"from": "orders@shop.example", "to": []string{"carol@example.net", "bob@example.net"},
			"subject": "Hello", "text": "Hi"}).Str("messageId")
		e.waitStatus(t, partly, "partially_delivered")
		want[partly] = "bounced"

		for id, w := range want {
			if got := e.lastEvent(t, id); got != w {
				t.Errorf("%s: last_event %s, want %s", id, got, w)
			}
		}
		for _, d := range e.listEmails(t, "").Data {
			if d.LastEvent != want[d.ID] {
				t.Errorf("listed %s: last_event %s, want %s", d.ID, d.LastEvent, want[d.ID])
			}
		}
		release()
		e.waitStatus(t, queued, "delivered")
		if got := e.lastEvent(t, queued); got != "delivered" {
			t.Errorf("released: %s, want delivered", got)
		}
	})
}

// TestResendRescheduleAndCancel: PATCH /emails/{id} moves a scheduled
// send, by a time or by "in N hours", and POST /emails/{id}/cancel
// cancels it, both answering {object: "email", id}; what is no longer
// scheduled is refused, saying why.
func TestResendRescheduleAndCancel(t *testing.T) {
	storetest.Each(t, func(t *testing.T, eng storetest.Engine) {
		e := newEnv(t, eng)
		e.verifiedDomain(t, "shop.example")
		e.mailDomain("example.net")
		id := e.scheduledSend(t, e.clock.Now().Add(time.Hour), "ann@example.net", nil)
		scheduledAt := func() time.Time {
			t.Helper()
			at, err := time.Parse(time.RFC3339, e.emailsCall(t, "GET", "/emails/"+id, nil).Str("scheduled_at"))
			if err != nil {
				t.Fatal(err)
			}
			return at
		}
		ref := fmt.Sprintf(`{"object":"email","id":%q}`, id)

		// As the Go SDK sends it: the id in the body too.
		at := e.clock.Now().Add(3 * time.Hour).Truncate(time.Second)
		r := e.emailsCall(t, "PATCH", "/emails/"+id, map[string]any{"id": id, "scheduled_at": at.Format("2006-01-02T15:04:05.000Z")})
		if r.Status != 200 || strings.TrimSpace(string(r.Body)) != ref {
			t.Fatalf("reschedule: %d %s", r.Status, r.Body)
		}
		if got := scheduledAt(); !got.Equal(at) {
			t.Errorf("scheduled_at %v, want %v", got, at)
		}
		if r := e.emailsCall(t, "PATCH", "/emails/"+id, map[string]any{"scheduled_at": "in 2 hours"}); r.Status != 200 {
			t.Fatalf("reschedule in 2 hours: %d %s", r.Status, r.Body)
		}
		if got, want := scheduledAt(), time.Now().Add(2*time.Hour); got.Sub(want).Abs() > time.Minute {
			t.Errorf("in 2 hours: scheduled_at %v, want about %v", got, want)
		}
		if got := e.lastEvent(t, id); got != "scheduled" {
			t.Errorf("last_event %s after the reschedules", got)
		}

		wantResendError(t, e.emailsCall(t, "PATCH", "/emails/"+id, map[string]any{"id": id, "scheduled_at": nil}), 422, "missing_required_field", "scheduled_at")
		wantResendError(t, e.emailsCall(t, "PATCH", "/emails/"+id, map[string]any{"scheduled_at": "next tuesday"}), 422, "validation_error",
			"scheduled_at", "next tuesday", "in N minutes")
		wantResendError(t, e.emailsCall(t, "PATCH", "/emails/"+id, map[string]any{"scheduled_at": "2020-01-01T00:00:00Z"}), 422, "validation_error", "past")
		wantResendError(t, e.emailsCall(t, "PATCH", "/emails/"+id, map[string]any{"scheduled_at": "in 90 days"}), 422, "validation_error", "30 days")
		if got := scheduledAt(); got.Sub(time.Now().Add(2*time.Hour)).Abs() > time.Minute {
			t.Errorf("a refused reschedule moved the send to %v", got)
		}

		r = e.emptyJSON(t, "POST", "/emails/"+id+"/cancel", e.admin)
		if r.Status != 200 || strings.TrimSpace(string(r.Body)) != ref {
			t.Fatalf("cancel: %d %s", r.Status, r.Body)
		}
		if got := e.lastEvent(t, id); got != "canceled" {
			t.Errorf("last_event %s after the cancel", got)
		}
		wantResendError(t, e.emptyJSON(t, "POST", "/emails/"+id+"/cancel", e.admin), 409, "validation_error", "canceled")
		wantResendError(t, e.emailsCall(t, "PATCH", "/emails/"+id, map[string]any{"scheduled_at": "in 1 hour"}), 409, "validation_error", "canceled")

		// Mail already sent cannot be canceled or moved.
		sent := e.sendOne(t, "bob@example.net")
		e.waitStatus(t, sent, "delivered")
		wantResendError(t, e.emptyJSON(t, "POST", "/emails/"+sent+"/cancel", e.admin), 409, "validation_error", "delivered", "no longer scheduled")
		wantResendError(t, e.emailsCall(t, "PATCH", "/emails/"+sent, map[string]any{"scheduled_at": "in 1 hour"}), 409, "validation_error", "delivered")

		// Another account's, or none at all, is not found.
		theirs := e.scheduledSend(t, e.clock.Now().Add(time.Hour), "carol@example.net", nil)
		other := storetest.NewAccount(t, e.store, "globex")
		otherKey := e.newKey(t, other, mailroom.Scopes(mailroom.AllScopes))
		wantResendError(t, e.emptyJSON(t, "POST", "/emails/"+theirs+"/cancel", otherKey), 404, "not_found")
		wantResendError(t, e.Do(apitest.Request{Method: "PATCH", Path: "/emails/" + theirs, Key: otherKey,
			Body: map[string]any{"scheduled_at": "in 1 hour"}}), 404, "not_found")
		wantResendError(t, e.emptyJSON(t, "POST", "/emails/msg_nope/cancel", e.admin), 404, "not_found")
		if got := e.lastEvent(t, theirs); got != "scheduled" {
			t.Errorf("another account's calls changed the send: %s", got)
		}
	})
}
