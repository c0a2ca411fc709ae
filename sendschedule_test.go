package mailroom_test

import (
	"strings"
	"testing"
	"time"

	"github.com/mailroom/mailroom"
)

func TestParseScheduledAtAccepts(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want time.Time
	}{
		{"2026-11-22T11:00:00Z", sendNow.Add(time.Hour)},
		{"2026-11-22T12:00:00+02:00", sendNow}, // 10:00 UTC: now
		{"2026-11-22T09:59:00Z", sendNow},      // 60 s in the past counts as now
		{"2026-11-22T09:59:30.5Z", sendNow},
		{"2026-11-22T10:00:00.250Z", sendNow.Add(time.Second)}, // a fraction rounds up: never early
		{"2026-11-22T10:59:59.000001Z", sendNow.Add(time.Hour)},
		{"2026-11-22T11:00:00.000Z", sendNow.Add(time.Hour)},
		{"2026-11-22T11:00:00-00:00", sendNow.Add(time.Hour)},
		{"2026-12-22T10:00:00Z", sendNow.Add(mailroom.MaxScheduleAhead)}, // exactly 30 days
		{"2026-12-22T05:00:00-05:00", sendNow.Add(mailroom.MaxScheduleAhead)},
	} {
		got, err := mailroom.ParseScheduledAt(tc.in, sendNow)
		if err != nil {
			t.Errorf("ParseScheduledAt(%q): %v", tc.in, err)
			continue
		}
		if !got.Equal(tc.want) || got.Location() != time.UTC {
			t.Errorf("ParseScheduledAt(%q) = %v, want %v in UTC", tc.in, got, tc.want)
		}
	}
}

func TestParseScheduledAtRefuses(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"", "must not be empty"},
		{"tomorrow", "not an RFC 3339 time"},
		{"2026-11-22 11:00:00Z", "not an RFC 3339 time"},
		{"2026-11-22T11:00:00", "not an RFC 3339 time"}, // no zone
		{"2026-11-22", "not an RFC 3339 time"},
		{"1700000000", "not an RFC 3339 time"},
		{"2026-11-22T09:58:59Z", "in the past"}, // 61 s
		{"2025-01-01T00:00:00Z", "in the past"},
		{"2026-12-22T10:00:01Z", "more than 30 days ahead"},
		{"2026-11-23T10:00:00+24:00", "not an RFC 3339 time"}, // RFC 3339 §5.6: hours 00-23
		{"2026-11-23T10:00:00+23:60", "not an RFC 3339 time"},
		{"2026-11-22T11:00:00,5Z", "not an RFC 3339 time"},
		{"2026-11-22T11:00:00." + strings.Repeat("1", 100) + "Z", "not an RFC 3339 time"},
	} {
		at, err := mailroom.ParseScheduledAt(tc.in, sendNow)
		if err == nil {
			t.Errorf("ParseScheduledAt(%q) = %v, want an error", tc.in, at)
			continue
		}
		e, ok := err.(*mailroom.Error)
		if !ok || e.Code != mailroom.ECodeValidation || len(e.Details) != 1 || e.Details[0].Field != "scheduledAt" {
			t.Errorf("ParseScheduledAt(%q) error %#v, want a validation error on scheduledAt", tc.in, err)
			continue
		}
		if !strings.Contains(e.Details[0].Message, tc.want) {
			t.Errorf("ParseScheduledAt(%q) = %q, want it to mention %q", tc.in, e.Details[0].Message, tc.want)
		}
	}
}
