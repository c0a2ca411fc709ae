package http_test

import (
	"context"
	"net/url"
	"testing"
	"time"

	"github.com/mailroom/mailroom"
	"github.com/mailroom/mailroom/apitest"
	"github.com/mailroom/mailroom/client/api"
	"github.com/mailroom/mailroom/storetest"
)

// GET /v1/messages/{id} of a message with more events than the timeline
// holds answers its newest ones and olderEventsCursor, from which
// GET /v1/events?messageId= lists the rest (issue 27: 40,003 events made
// one answer of 15.8 MB).
func TestMessageTimelineBounded(t *testing.T) {
	storetest.Each(t, func(t *testing.T, eng storetest.Engine) {
		e := newEnv(t, eng)
		e.verifiedDomain(t, "shop.example")
		e.mailDomain("example.net")
		id := e.sendOne(t, "ann@example.net")
		e.waitStatus(t, id, "delivered")

		get := func() (api.Message, int) {
			r := e.Do(apitest.Request{Method: "GET", Path: "/v1/messages/" + id, Key: e.admin})
			if r.Status != 200 {
				t.Fatalf("GET the message: %d %s", r.Status, r.Body)
			}
			return apitest.Decode[api.Message](r), len(r.Body)
		}
		if m, _ := get(); m.OlderEventsCursor != nil {
			t.Fatalf("a message of %d events says it has older ones", len(m.Events))
		}

		ctx := context.Background()
		m, events, err := e.store.Message(ctx, e.acct.ID, id)
		if err != nil {
			t.Fatal(err)
		}
		const extra = 100
		start := events[len(events)-1].CreatedAt.Add(time.Second)
		for i := range mailroom.MaxTimelineEvents + extra {
			ev := mailroom.NewEmailEvent(m.Summary(), m.Recipients[0], mailroom.EventEmailDeferred, start.Add(time.Duration(i)*time.Millisecond))
			ev.Email.ReportText = "still trying"
			if err := e.store.InsertEventFor(ctx, ev, nil); err != nil {
				t.Fatal(err)
			}
		}
		total := len(events) + mailroom.MaxTimelineEvents + extra

		got, size := get()
		if len(got.Events) != mailroom.MaxTimelineEvents || got.OlderEventsCursor == nil {
			t.Fatalf("a message of %d events answers %d of them (%d bytes), olderEventsCursor %v; want %d and a cursor",
				total, len(got.Events), size, got.OlderEventsCursor, mailroom.MaxTimelineEvents)
		}
		// A bound on the body, not a speed target: 500 events of a few
		// hundred bytes each, whatever the message holds.
		if size > 400<<10 {
			t.Fatalf("the answer is %d bytes", size)
		}
		seen := map[string]bool{}
		for _, ev := range got.Events {
			seen[ev.ID] = true
		}
		cursor := *got.OlderEventsCursor
		for cursor != "" {
			r := e.Do(apitest.Request{Method: "GET", Path: "/v1/events?limit=100&messageId=" + id + "&cursor=" + url.QueryEscape(cursor), Key: e.admin})
			if r.Status != 200 {
				t.Fatalf("GET the older events: %d %s", r.Status, r.Body)
			}
			page := apitest.Decode[api.List[api.EventRecord]](r)
			for _, ev := range page.Data {
				if seen[ev.ID] {
					t.Fatalf("event %s is in the timeline and after its cursor", ev.ID)
				}
				seen[ev.ID] = true
			}
			cursor = ""
			if page.NextCursor != nil {
				cursor = *page.NextCursor
			}
		}
		if len(seen) != total {
			t.Fatalf("the timeline and the events after its cursor hold %d events, want %d", len(seen), total)
		}
		// The cursor is the events list's for this message alone.
		r := e.Do(apitest.Request{Method: "GET", Path: "/v1/events?type=email.deferred&messageId=" + id + "&cursor=" + url.QueryEscape(*got.OlderEventsCursor), Key: e.admin})
		wantError(t, r, 400, "validation_error")
	})
}
