package resend

import (
	"strings"
	"testing"
	"time"
)

func TestScheduledAtForms(t *testing.T) {
	now := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	for in, want := range map[string]string{
		"in 1 min":                   "2026-11-22T10:01:00Z",
		"in 5 mins":                  "2026-11-22T10:05:00Z",
		"in 1 minute":                "2026-11-22T10:01:00Z",
		"In 30 Minutes":              "2026-11-22T10:30:00Z",
		"in 2 hours":                 "2026-11-22T12:00:00Z",
		"in 1 hour":                  "2026-11-22T11:00:00Z",
		"in 1 day":                   "2026-11-23T10:00:00Z",
		"in 3 days":                  "2026-11-25T10:00:00Z",
		"2026-11-22T11:00:00Z":       "2026-11-22T11:00:00Z",
		"2026-11-22T11:00:00.858Z":   "2026-11-22T11:00:00.858Z",
		"2026-11-22T12:00:00+01:00":  "2026-11-22T12:00:00+01:00",
		"2026-11-22T12:00:00+0100":   "2026-11-22T11:00:00Z",
		"2026-11-22T12:00:00.5+0100": "2026-11-22T11:00:00.5Z",
		"2026-11-22T12:00+01:00":     "2026-11-22T11:00:00Z",
	} {
		got, err := ScheduledAt(in, now)
		if err != nil || got != want {
			t.Errorf("ScheduledAt(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	for _, in := range []string{"tomorrow", "in 5", "in minutes", "5 minutes", "in -1 minutes", "in 1 week",
		"2026-11-22T11:00:00", "2026-11-22", "in 1234567 minutes", "now"} {
		_, err := ScheduledAt(in, now)
		if err == nil || !strings.Contains(err.Error(), `"in N minutes"`) || !strings.Contains(err.Error(), "ISO 8601") {
			t.Errorf("ScheduledAt(%q): %v, want an error naming the forms", in, err)
		}
	}
}
