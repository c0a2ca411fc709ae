package sqlstore

import (
	"testing"

	"github.com/mailroom/mailroom"
)

// storedEventBits are the bit positions that webhook_endpoints.event_mask
// holds for each event type, as stores in use have them on disk. They are
// written out here, not derived from mailroom.EventTypes, so that
// reordering that list or inserting into it (rather than appending) fails
// this test instead of silently moving every stored subscription to
// another type. A new type is appended to EventTypes and added here with
// the next bit.
var storedEventBits = []struct {
	typ string
	bit int
}{
	{"email.queued", 0},
	{"email.scheduled", 1},
	{"email.delivered", 2},
	{"email.deferred", 3},
	{"email.bounced", 4},
	{"email.failed", 5},
	{"email.suppressed", 6},
	{"email.complained", 7},
	{"email.canceled", 8},
	{"domain.verified", 9},
	{"domain.failed", 10},
	{"domain.temporary_failure", 11},
	{"webhook.test", 12}, // holds its place; it has no bit (eventBit)
	{"email.received", 13},
	{"email.opened", 14},
	{"email.clicked", 15},
}

func TestStoredEventBitsDoNotMove(t *testing.T) {
	if len(mailroom.EventTypes) != len(storedEventBits) {
		t.Fatalf("mailroom.EventTypes has %d types and this test pins %d: add the new type here with the next bit",
			len(mailroom.EventTypes), len(storedEventBits))
	}
	for _, want := range storedEventBits {
		if got := mailroom.EventTypes[want.bit]; got != want.typ {
			t.Errorf("mailroom.EventTypes[%d] is %q, stored masks say %q: append new types, never insert or reorder", want.bit, got, want.typ)
		}
		wantBit := int64(1) << want.bit
		if want.typ == mailroom.EventWebhookTest {
			wantBit = 0 // sent only to the endpoint a test names
		}
		if got := eventBit(want.typ); got != wantBit {
			t.Errorf("eventBit(%q) = %#x, want %#x", want.typ, got, wantBit)
		}
	}
	if got, want := eventMask([]string{"email.bounced", "email.complained", "domain.failed"}), int64(1<<4|1<<7|1<<10); got != want {
		t.Errorf("the mask of bounced, complained and domain.failed is %#x, want %#x", got, want)
	}
	if got := eventMask([]string{mailroom.AllEventTypes}); got != -1 {
		t.Errorf("the mask of %q is %#x, want every bit", mailroom.AllEventTypes, got)
	}
}
