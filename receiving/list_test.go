package receiving

import (
	"errors"
	"testing"
	"time"

	"github.com/mailroom/mailroom"
)

// GET /v1/received's filters: what a client sends is read as an address
// or a time, and a value no message can match is a 400 on its field.
func TestNewFilter(t *testing.T) {
	f, err := NewFilter("Support <support+ticket-42@in.example.com>", "alice@example.org", "2026-11-01T10:00:00+01:00", "2026-11-02T00:00:00Z")
	if err != nil {
		t.Fatal(err)
	}
	want := mailroom.ReceivedFilter{To: "support+ticket-42@in.example.com", From: "alice@example.org",
		Since: time.Date(2026, 11, 1, 9, 0, 0, 0, time.UTC), Until: time.Date(2026, 11, 2, 0, 0, 0, 0, time.UTC)}
	if f != want {
		t.Fatalf("filter %+v, want %+v", f, want)
	}
	if f, err := NewFilter("", "", "", ""); err != nil || f != (mailroom.ReceivedFilter{}) {
		t.Fatalf("no filters: %+v %v", f, err)
	}
	for _, c := range []struct {
		to, from, since, until string
		field                  string
	}{
		{to: "not an address", field: "to"},
		{from: "@", field: "from"},
		{since: "yesterday", field: "since"},
		{until: "2026-11-02", field: "until"},
		{since: "2026-11-02T00:00:00Z", until: "2026-11-02T00:00:00Z", field: "until"},
		{since: "2026-11-03T00:00:00Z", until: "2026-11-02T00:00:00Z", field: "until"},
	} {
		_, err := NewFilter(c.to, c.from, c.since, c.until)
		var e *mailroom.Error
		if !errors.As(err, &e) || e.Code != mailroom.ECodeValidation || !hasField(e, c.field) {
			t.Errorf("%+v: %v, want a validation error on %s", c, err, c.field)
		}
	}
}

func hasField(e *mailroom.Error, field string) bool {
	for _, d := range e.Details {
		if d.Field == field {
			return true
		}
	}
	return false
}
