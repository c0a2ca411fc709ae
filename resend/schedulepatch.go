package resend

import (
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/mailroom/mailroom"
)

// relativeSchedule is Resend's natural-language scheduled_at
// (https://resend.com/docs/dashboard/emails/schedule-email): "in 1 min",
// "in 5 minutes", "in 2 hours", "in 1 day".
var relativeSchedule = regexp.MustCompile(`^in\s+([0-9]{1,6})\s*(minutes?|mins?|hours?|days?)$`)

// RescheduleAt translates the scheduled_at of PATCH /emails/{id} into the
// RFC 3339 time Mailroom's reschedule takes (send.RescheduleRequest):
// "in N minutes|hours|days" becomes that long after now, and a time is
// passed on as it is, for the service to check by the rules of every
// scheduledAt (not in the past, at most 30 days ahead). A string that is
// neither an RFC 3339 time nor the relative form is a validation error on
// scheduledAt that names both forms.
func RescheduleAt(s string, now time.Time) (string, error) {
	s = strings.TrimSpace(s)
	if m := relativeSchedule.FindStringSubmatch(strings.ToLower(s)); m != nil {
		n, _ := strconv.Atoi(m[1])
		unit := time.Minute
		switch {
		case strings.HasPrefix(m[2], "hour"):
			unit = time.Hour
		case strings.HasPrefix(m[2], "day"):
			unit = 24 * time.Hour
		}
		return now.Add(time.Duration(n) * unit).UTC().Format(time.RFC3339), nil
	}
	if _, err := time.Parse(time.RFC3339, s); err == nil || s == "" {
		return s, nil
	}
	var v mailroom.Validator
	v.Add("scheduledAt", `%q is not a time Mailroom reads: give an ISO 8601 time with a time zone, such as "2026-11-22T10:00:00Z", or "in N minutes", "in N hours" or "in N days", such as "in 1 min"`, s)
	return "", v.Err()
}
