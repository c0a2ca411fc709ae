package resend

import (
	"strings"
	"testing"
	"time"

	"github.com/mailroom/mailroom"
)

func TestRescheduleAt(t *testing.T) {
	now := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	for in, want := range map[string]string{
		"in 1 min":                  "2026-11-22T10:01:00Z",
		"in 5 minutes":              "2026-11-22T10:05:00Z",
		"In 2 Hours":                "2026-11-22T12:00:00Z",
		"in 1 day":                  "2026-11-23T10:00:00Z",
		" in 3 days ":               "2026-11-25T10:00:00Z",
		"2026-11-22T11:00:00+01:00": "2026-11-22T11:00:00+01:00", // the service checks it
		"2020-01-01T00:00:00Z":      "2020-01-01T00:00:00Z",
		"":                          "",
	} {
		if got, err := RescheduleAt(in, now); err != nil || got != want {
			t.Errorf("%q: %q, %v; want %q", in, got, err, want)
		}
	}
	for _, in := range []string{"tomorrow", "in a minute", "in 5 weeks", "in -5 minutes", "2026-11-22 10:00", "2026-11-22T10:00:00"} {
		_, err := RescheduleAt(in, now)
		e, ok := err.(*mailroom.Error)
		if !ok || e.Code != mailroom.ECodeValidation || len(e.Details) != 1 || e.Details[0].Field != "scheduledAt" ||
			!strings.Contains(e.Details[0].Message, "in N minutes") {
			t.Errorf("%q: %v, want a validation error on scheduledAt naming the forms", in, err)
		}
	}
}
