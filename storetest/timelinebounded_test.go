package storetest

import (
	"context"
	"testing"
	"time"

	"github.com/mailroom/mailroom"
)

func init() {
	extraSuites = append(extraSuites, suite{"MessageTimelineBounded", testMessageTimelineBounded})
}

// A message's timeline is its newest mailroom.MaxTimelineEvents events,
// oldest first, and a cursor from which the events list gives the older
// ones: every event once, between the two (issue 27: 40,003 events made
// one answer of 15.8 MB).
func testMessageTimelineBounded(t *testing.T, s mailroom.Store) {
	ctx := context.Background()
	acme := NewAccount(t, s, "acme")
	m := delivered(t, s, acme, "ann@example.net")
	if got, events := messageOf(t, s, acme.ID, m.ID); got.OlderEventsCursor != "" || len(events) != 2 {
		t.Fatalf("a message of %d events has a cursor to older ones: %q", len(events), got.OlderEventsCursor)
	}
	const extra = 20
	for i := range mailroom.MaxTimelineEvents + extra {
		e := mailroom.NewEmailEvent(m.Summary(), m.Recipients[0], mailroom.EventEmailDeferred, t0.Add(time.Second+time.Duration(i)*time.Millisecond))
		Try(0, s.InsertEventFor(ctx, e, nil)).Must(t)
	}
	all := map[string]bool{}
	var newest string
	cursor := ""
	for {
		page, next := Try2(s.ListEvents(ctx, acme.ID, mailroom.EventFilter{MessageID: m.ID}, mailroom.Page{Limit: mailroom.MaxPageLimit, Cursor: cursor})).Must(t)
		for _, e := range page {
			all[e.ID] = true
			if newest == "" {
				newest = e.ID
			}
		}
		if cursor = next; cursor == "" {
			break
		}
	}
	if len(all) != mailroom.MaxTimelineEvents+extra+2 {
		t.Fatalf("the events list has %d of the message's events", len(all))
	}

	got, events := messageOf(t, s, acme.ID, m.ID)
	if len(events) != mailroom.MaxTimelineEvents || got.OlderEventsCursor == "" {
		t.Fatalf("a message of %d events: a timeline of %d, cursor %q; want %d and a cursor",
			len(all), len(events), got.OlderEventsCursor, mailroom.MaxTimelineEvents)
	}
	if events[len(events)-1].ID != newest {
		t.Fatalf("the timeline ends with %s, not the newest event %s", events[len(events)-1].ID, newest)
	}
	seen := map[string]bool{}
	for i, e := range events {
		if i > 0 && e.ID <= events[i-1].ID {
			t.Fatalf("the timeline is not oldest first at %d: %s after %s", i, e.ID, events[i-1].ID)
		}
		if string(e.Data) == "" || e.Data[0] != '{' {
			t.Fatalf("event %s without its data: %q", e.ID, e.Data)
		}
		seen[e.ID] = true
	}
	// The cursor continues the timeline into the older events.
	cursor = got.OlderEventsCursor
	for cursor != "" {
		page, next := Try2(s.ListEvents(ctx, acme.ID, mailroom.EventFilter{MessageID: m.ID}, mailroom.Page{Limit: mailroom.MaxPageLimit, Cursor: cursor})).Must(t)
		for _, e := range page {
			if seen[e.ID] {
				t.Fatalf("event %s is in the timeline and after its cursor", e.ID)
			}
			seen[e.ID] = true
		}
		cursor = next
	}
	if len(seen) != len(all) {
		t.Fatalf("the timeline and the events after its cursor hold %d events, want all %d", len(seen), len(all))
	}
}
