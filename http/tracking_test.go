package http_test

import (
	"context"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/mailroom/mailroom"
	"github.com/mailroom/mailroom/apitest"
	"github.com/mailroom/mailroom/client/api"
	"github.com/mailroom/mailroom/storetest"
)

// Engagement tracking through the API (docs/api.md "Engagement
// tracking"). Tracked sends here are scheduled a day ahead, so that what
// the log shows is what accept decided, with nothing sent meanwhile.

// trackedSend sends from shop.example, a day ahead, with extra fields.
func (e *env) trackedSend(t *testing.T, extra map[string]any) *apitest.Response {
	t.Helper()
	body := map[string]any{"from": "orders@shop.example", "to": "ann@example.net", "subject": "Receipt",
		"html":        `<a href="https://shop.example/o?id=1">Order</a>`,
		"scheduledAt": e.clock.Now().Add(24 * time.Hour).Format(time.RFC3339)}
	for k, v := range extra {
		if v == nil {
			delete(body, k)
			continue
		}
		body[k] = v
	}
	return e.send(t, body)
}

// messageTracking is the log's tracking of message id.
func (e *env) messageTracking(t *testing.T, id string) api.Tracking {
	t.Helper()
	r := e.Do(apitest.Request{Method: "GET", Path: "/v1/messages/" + id, Key: e.admin})
	if r.Status != 200 {
		t.Fatalf("GET message %s: %d %s", id, r.Status, r.Body)
	}
	return apitest.Decode[api.Message](r).Tracking
}

// A domain's openTracking and clickTracking: off on a new domain, set by
// PATCH one at a time (null leaves a setting as it is), shown by every
// domain route, and followed by the sends accepted right after on this
// node; a send's tracking overrides either for its one message, a field
// it leaves out following the domain; a message without html is tracked
// for nothing.
func TestTrackingSettingsAndOverrides(t *testing.T) {
	storetest.Each(t, func(t *testing.T, eng storetest.Engine) {
		e := newEnv(t, eng)
		d := e.verifiedDomain(t, "shop.example")
		if d.OpenTracking || d.ClickTracking {
			t.Fatalf("a new domain tracks: open %v click %v", d.OpenTracking, d.ClickTracking)
		}
		id := e.trackedSend(t, nil).Str("messageId")
		if got := e.messageTracking(t, id); got != (api.Tracking{}) {
			t.Fatalf("a send from an untracked domain is tracked: %+v", got)
		}

		patch := func(body any) api.Domain {
			t.Helper()
			r := e.domainCall(t, "PATCH", "/v1/domains/shop.example", e.admin, body)
			if r.Status != 200 {
				t.Fatalf("PATCH %v: %d %s", body, r.Status, r.Body)
			}
			return decodeDomain(r)
		}
		if d := patch(map[string]any{"openTracking": true}); !d.OpenTracking || d.ClickTracking {
			t.Fatalf("after openTracking true: open %v click %v", d.OpenTracking, d.ClickTracking)
		}
		if d := patch(map[string]any{"clickTracking": true, "openTracking": nil}); !d.OpenTracking || !d.ClickTracking {
			t.Fatalf("after clickTracking true, openTracking null: open %v click %v", d.OpenTracking, d.ClickTracking)
		}
		if d := decodeDomain(e.domainCall(t, "GET", "/v1/domains/shop.example", e.admin, nil)); !d.OpenTracking || !d.ClickTracking {
			t.Fatalf("GET after PATCH: open %v click %v", d.OpenTracking, d.ClickTracking)
		}
		// The audit log names each change, and only the change.
		entries := e.auditLog(t, e.admin, "")
		if len(entries) < 2 || entries[0].Action != api.AuditDomainUpdated || entries[1].Action != api.AuditDomainUpdated {
			t.Fatalf("the audit log after two PATCHes: %+v", entries)
		}
		if c := entries[0].Changes; len(c) != 1 || c["clickTracking"] != [2]any{false, true} {
			t.Errorf("the second PATCH's changes: %v", c)
		}
		if c := entries[1].Changes; len(c) != 1 || c["openTracking"] != [2]any{false, true} {
			t.Errorf("the first PATCH's changes: %v", c)
		}
		list := apitest.Decode[api.List[api.Domain]](e.domainCall(t, "GET", "/v1/domains", e.admin, nil))
		if len(list.Data) != 1 || !list.Data[0].OpenTracking || !list.Data[0].ClickTracking {
			t.Fatalf("the list: %+v", list.Data)
		}

		// The send right after the PATCH follows it: the sending-domain
		// check's cached answer was forgotten.
		for _, c := range []struct {
			tracking any
			html     any
			want     api.Tracking
		}{
			{nil, "", api.Tracking{Opens: true, Clicks: true}},
			{map[string]any{"clicks": false}, "", api.Tracking{Opens: true}},
			{map[string]any{"opens": false, "clicks": nil}, "", api.Tracking{Clicks: true}},
			{map[string]any{}, "", api.Tracking{Opens: true, Clicks: true}},
			{map[string]any{"opens": true, "clicks": true}, nil, api.Tracking{}},
		} {
			extra := map[string]any{"tracking": c.tracking}
			if c.html == nil {
				extra["html"], extra["text"] = nil, "No html: nothing to track."
			}
			r := e.trackedSend(t, extra)
			if r.Status != 200 {
				t.Fatalf("send with tracking %v: %d %s", c.tracking, r.Status, r.Body)
			}
			if got := e.messageTracking(t, r.Str("messageId")); got != c.want {
				t.Errorf("tracking %v (html %v): the message is tracked for %+v, want %+v", c.tracking, c.html != nil, got, c.want)
			}
		}

		patch(map[string]any{"openTracking": false, "clickTracking": false})
		if got := e.messageTracking(t, e.trackedSend(t, nil).Str("messageId")); got != (api.Tracking{}) {
			t.Fatalf("a send after tracking was turned off is tracked for %+v", got)
		}
		on := e.trackedSend(t, map[string]any{"tracking": map[string]any{"opens": true}})
		if got := e.messageTracking(t, on.Str("messageId")); got != (api.Tracking{Opens: true}) {
			t.Fatalf("a send turning opens on from an untracked domain: %+v", got)
		}
	})
}

// Bad tracking input is a 4xx naming the field, never a 500, and changes
// nothing: a value of another JSON type, an unknown member of a send's
// tracking, a batch item's, a PATCH of the domain.
func TestTrackingBadInput(t *testing.T) {
	e := newEnv(t, storetest.SQLite)
	e.verifiedDomain(t, "shop.example")
	for _, c := range []struct {
		what   string
		extra  map[string]any
		code   string
		naming string
	}{
		{"opens a string", map[string]any{"tracking": map[string]any{"opens": "yes"}}, mailroom.ECodeInvalidJSON, "tracking.opens"},
		{"clicks a number", map[string]any{"tracking": map[string]any{"clicks": 1}}, mailroom.ECodeInvalidJSON, "tracking.clicks"},
		{"tracking a boolean", map[string]any{"tracking": true}, mailroom.ECodeInvalidJSON, "tracking"},
		{"an unknown member", map[string]any{"tracking": map[string]any{"open": true}}, mailroom.ECodeValidation, "tracking.open"},
	} {
		r := e.trackedSend(t, c.extra)
		wantError(t, r, 400, c.code)
		if !strings.Contains(string(r.Body), c.naming) {
			t.Errorf("%s: the error does not name %s: %s", c.what, c.naming, r.Body)
		}
	}
	r := e.Do(apitest.Request{Method: "POST", Path: "/v1/send/batch", Key: e.admin, Body: map[string]any{"messages": []any{
		map[string]any{"from": "orders@shop.example", "to": "ann@example.net", "subject": "A", "html": "<p>a</p>", "tracking": map[string]any{"opens": true}},
		map[string]any{"from": "orders@shop.example", "to": "bob@example.net", "subject": "B", "html": "<p>b</p>", "tracking": map[string]any{"opens": "no"}},
	}}})
	if r.Status != 200 && r.Status != 400 {
		t.Fatalf("a batch with a bad item: %d %s", r.Status, r.Body)
	}
	if !strings.Contains(string(r.Body), "tracking.opens") {
		t.Errorf("the batch's error does not name tracking.opens: %s", r.Body)
	}
	for _, body := range []string{`{"openTracking": "yes"}`, `{"clickTracking": 1}`, `{"clicktracking": true}`} {
		r := e.domainCall(t, "PATCH", "/v1/domains/shop.example", e.admin, body)
		if r.Status != 400 {
			t.Errorf("PATCH %s: %d %s, want 400", body, r.Status, r.Body)
		}
	}
	if d := decodeDomain(e.domainCall(t, "GET", "/v1/domains/shop.example", e.admin, nil)); d.OpenTracking || d.ClickTracking {
		t.Fatalf("refused PATCHes changed the domain: open %v click %v", d.OpenTracking, d.ClickTracking)
	}
}

// A batch item's and a template send's tracking each override the domain
// for their own message.
func TestTrackingOfBatchAndTemplate(t *testing.T) {
	e := newEnv(t, storetest.SQLite)
	e.verifiedDomain(t, "shop.example")
	e.domainCall(t, "PATCH", "/v1/domains/shop.example", e.admin, map[string]any{"clickTracking": true})
	later := e.clock.Now().Add(24 * time.Hour).Format(time.RFC3339)
	r := e.Do(apitest.Request{Method: "POST", Path: "/v1/send/batch", Key: e.admin, Body: map[string]any{"messages": []any{
		map[string]any{"from": "orders@shop.example", "to": "ann@example.net", "subject": "A", "html": "<p>a</p>", "scheduledAt": later},
		map[string]any{"from": "orders@shop.example", "to": "bob@example.net", "subject": "B", "html": "<p>b</p>", "scheduledAt": later,
			"tracking": map[string]any{"opens": true, "clicks": false}},
	}}})
	res := apitest.Decode[api.BatchSendResult](r)
	if r.Status != 200 || len(res.Data) != 2 {
		t.Fatalf("batch: %d %s", r.Status, r.Body)
	}
	if got := e.messageTracking(t, res.Data[0].MessageID); got != (api.Tracking{Clicks: true}) {
		t.Errorf("the item without tracking: %+v", got)
	}
	if got := e.messageTracking(t, res.Data[1].MessageID); got != (api.Tracking{Opens: true}) {
		t.Errorf("the item with tracking: %+v", got)
	}
	if r := e.Do(apitest.Request{Method: "POST", Path: "/v1/templates", Key: e.admin, Body: map[string]any{
		"name": "receipt", "subject": "Receipt {{n}}", "html": `<a href="https://shop.example/{{n}}">Order</a>`}}); r.Status != 201 {
		t.Fatalf("template: %d %s", r.Status, r.Body)
	}
	r = e.trackedSend(t, map[string]any{"html": nil, "subject": nil, "template": "receipt", "variables": map[string]any{"n": "7"},
		"tracking": map[string]any{"opens": true}})
	if r.Status != 200 {
		t.Fatalf("template send: %d %s", r.Status, r.Body)
	}
	if got := e.messageTracking(t, r.Str("messageId")); got != (api.Tracking{Opens: true, Clicks: true}) {
		t.Errorf("the template send: %+v", got)
	}
}

// What comes back from a tracked message, recorded as the tracking
// service records it: each recipient's opens and clicks, the links with
// their clicks, the events with url, userAgent, truncated ip and machine
// (on the timeline and in /v1/events); and the log's ?event= filter,
// bound into its cursor.
func TestEngagementInTheLog(t *testing.T) {
	storetest.Each(t, func(t *testing.T, eng storetest.Engine) {
		e := newEnv(t, eng)
		e.verifiedDomain(t, "shop.example")
		e.domainCall(t, "PATCH", "/v1/domains/shop.example", e.admin, map[string]any{"openTracking": true, "clickTracking": true})
		links := []string{"https://shop.example/o?id=1&x=ü#top", "https://shop.example/help"}
		var ids []string
		for range 3 {
			r := e.trackedSend(t, map[string]any{"to": []string{"ann@example.net", "bob@example.net"}})
			if r.Status != 200 {
				t.Fatalf("send: %d %s", r.Status, r.Body)
			}
			ids = append(ids, r.Str("messageId"))
		}
		opened, clicked, untouched := ids[0], ids[1], ids[2]
		ctx := context.Background()
		for _, id := range ids {
			if err := e.store.SaveTrackedLinks(ctx, id, links); err != nil {
				t.Fatal(err)
			}
		}
		now := e.clock.Now()
		for _, hit := range []*mailroom.EngagementHit{
			{Type: mailroom.EventEmailOpened, MessageID: opened, Recipient: "bob@example.net", UserAgent: "Mozilla/5.0", IP: "192.0.2.0", At: now},
			{Type: mailroom.EventEmailOpened, MessageID: opened, Recipient: "bob@example.net", UserAgent: "Mozilla/5.0", IP: "192.0.2.0", At: now},
			{Type: mailroom.EventEmailClicked, MessageID: clicked, Recipient: "ann@example.net", LinkIndex: 0, URL: links[0],
				UserAgent: "Scanner", IP: "2001:db8:1::", At: now},
		} {
			if _, err := e.store.RecordEngagement(ctx, hit); err != nil {
				t.Fatalf("record %s: %v", hit.Type, err)
			}
		}

		r := e.Do(apitest.Request{Method: "GET", Path: "/v1/messages/" + clicked, Key: e.admin})
		m := apitest.Decode[api.Message](r)
		if len(m.Links) != 2 || m.Links[0] != (api.TrackedLink{URL: links[0], Clicks: 1}) || m.Links[1] != (api.TrackedLink{URL: links[1]}) {
			t.Fatalf("links: %s", r.Body)
		}
		if a, b := m.Recipients[0], m.Recipients[1]; a.Clicks != 1 || a.Opens != 0 || b.Clicks != 0 {
			t.Fatalf("recipients' counts: %s", r.Body)
		}
		var click *api.EmailEventData
		for _, ev := range m.Events {
			if ev.Type == api.EventEmailClicked {
				d, err := ev.EmailData()
				if err != nil {
					t.Fatal(err)
				}
				click = d
			}
		}
		// Not delivered yet: the click is a machine's.
		if click == nil || click.URL != links[0] || click.IP != "2001:db8:1::" || click.UserAgent != "Scanner" || !click.Machine || click.Recipient != "ann@example.net" {
			t.Fatalf("the click on the timeline: %+v in %s", click, r.Body)
		}
		m = apitest.Decode[api.Message](e.Do(apitest.Request{Method: "GET", Path: "/v1/messages/" + opened, Key: e.admin}))
		if m.Recipients[1].Opens != 2 {
			t.Fatalf("bob's opens: %+v", m.Recipients[1])
		}
		var opens int
		for _, ev := range m.Events {
			if ev.Type == api.EventEmailOpened {
				opens++
			}
		}
		if opens != 1 {
			t.Fatalf("%d email.opened events, want the first open's alone", opens)
		}
		events := apitest.Decode[api.List[api.EventRecord]](e.Do(apitest.Request{Method: "GET", Path: "/v1/events?type=email.opened", Key: e.admin}))
		if len(events.Data) != 1 || events.Data[0].MessageID != opened {
			t.Fatalf("/v1/events?type=email.opened: %+v", events.Data)
		}
		if d, err := events.Data[0].EmailData(); err != nil || d.IP != "192.0.2.0" || d.UserAgent != "Mozilla/5.0" || d.URL != "" || d.Machine {
			t.Fatalf("the open's data: %+v %v", d, err)
		}

		list := func(query string) ([]string, string) {
			t.Helper()
			r := e.Do(apitest.Request{Method: "GET", Path: "/v1/messages" + query, Key: e.admin})
			if r.Status != 200 {
				t.Fatalf("GET /v1/messages%s: %d %s", query, r.Status, r.Body)
			}
			l := apitest.Decode[api.List[api.Message]](r)
			var got []string
			for _, m := range l.Data {
				if len(m.Links) != 0 {
					t.Errorf("a list shows links: %s", r.Body)
				}
				got = append(got, m.ID)
			}
			next := ""
			if l.NextCursor != nil {
				next = *l.NextCursor
			}
			return got, next
		}
		if got, _ := list("?event=clicked"); strings.Join(got, ",") != clicked {
			t.Errorf("?event=clicked lists %v, want %s", got, clicked)
		}
		if got, _ := list("?event=opened"); strings.Join(got, ",") != opened {
			t.Errorf("?event=opened lists %v, want %s", got, opened)
		}
		if got, _ := list(""); len(got) != 3 || !strings.Contains(strings.Join(got, ","), untouched) {
			t.Errorf("no filter lists %v", got)
		}
		for _, q := range []string{"?event=delivered", "?event=OPENED", "?event=opened&event=clicked", "?event="} {
			r := e.Do(apitest.Request{Method: "GET", Path: "/v1/messages" + q, Key: e.admin})
			if q == "?event=" {
				if r.Status != 200 {
					t.Errorf("%s: %d %s, want every message", q, r.Status, r.Body)
				}
				continue
			}
			wantError(t, r, 400, mailroom.ECodeValidation)
			if !detailMentions(r, "event", "") {
				t.Errorf("%s: the error does not name event: %s", q, r.Body)
			}
		}
		// A cursor of the opened filter does not continue another list.
		if _, err := e.store.RecordEngagement(ctx, &mailroom.EngagementHit{Type: mailroom.EventEmailOpened, MessageID: untouched,
			Recipient: "ann@example.net", IP: "192.0.2.0", At: now}); err != nil {
			t.Fatal(err)
		}
		_, next := list("?event=opened&limit=1")
		if next == "" {
			t.Fatalf("two opened messages made no second page")
		}
		if got, _ := list("?event=opened&limit=1&cursor=" + url.QueryEscape(next)); len(got) != 1 {
			t.Errorf("the second page of opened: %v", got)
		}
		r = e.Do(apitest.Request{Method: "GET", Path: "/v1/messages?event=clicked&limit=1&cursor=" + url.QueryEscape(next), Key: e.admin})
		wantError(t, r, 400, mailroom.ECodeValidation)
	})
}
