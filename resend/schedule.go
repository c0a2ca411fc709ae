package resend

import (
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/mailroom/mailroom"
)

// scheduledAtForms names the forms ScheduledAt reads, for its error.
const scheduledAtForms = `give an ISO 8601 time with a time zone, such as "2026-11-22T10:00:00Z" or "2026-11-22T11:00:00+01:00", or "in N minutes", "in N hours" or "in N days" (also "min", "mins"), such as "in 1 min"`

// relativeTime is Resend's natural-language scheduled_at
// (https://resend.com/docs/dashboard/emails/schedule-email): "in 1 min",
// "in 5 minutes", "in 2 hours", "in 1 day".
var relativeTime = regexp.MustCompile(`^in\s+([0-9]{1,6})\s*(minutes?|mins?|hours?|days?)$`)

// isoLayouts are the ISO 8601 forms with a time zone that RFC 3339 does
// not take: an offset without its colon, or with hours alone.
var isoLayouts = []string{
	"2006-01-02T15:04:05.999999999Z0700",
	"2006-01-02T15:04:05.999999999Z07",
	"2006-01-02T15:04Z07:00",
	"2006-01-02T15:04Z0700",
}

// ScheduledAt translates Resend's scheduled_at into the RFC 3339 time
// that Mailroom's send request takes: an RFC 3339 time as it is (the
// service checks it, and its rules on how far ahead and how long ago), an
// ISO 8601 time with a time zone in RFC 3339's form, and "in N
// minutes|hours|days" as that long after now, the server's clock. A time
// without a zone is refused rather than guessed. Anything else is a
// validation error on scheduledAt that names the forms it reads.
func ScheduledAt(s string, now time.Time) (string, error) {
	s = strings.TrimSpace(s)
	if m := relativeTime.FindStringSubmatch(strings.ToLower(s)); m != nil {
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
	if _, err := time.Parse(time.RFC3339, s); err == nil {
		return s, nil
	}
	for _, layout := range isoLayouts {
		if t, err := time.Parse(layout, s); err == nil {
			return t.UTC().Format(time.RFC3339Nano), nil
		}
	}
	var v mailroom.Validator
	v.Add("scheduledAt", "%q is not a time Mailroom reads: "+scheduledAtForms, s)
	return "", v.Err()
}
