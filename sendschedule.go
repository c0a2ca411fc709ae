package mailroom

import (
	"errors"
	"strings"
	"time"
)

// Bounds of scheduledAt (docs/api.md "Sending").
const (
	// ScheduleGrace is how far in the past a scheduledAt may be and still
	// count as now: the client's clock and the request's travel time.
	ScheduleGrace = 60 * time.Second
	// MaxScheduleAhead is how far ahead a send may be scheduled.
	MaxScheduleAhead = 30 * 24 * time.Hour
)

// maxTimeLength bounds an RFC 3339 time as a client writes it: 35
// characters with nanoseconds; more is digits no clock has.
const maxTimeLength = 40

// validOffset reports whether an RFC 3339 time's numeric offset, if it
// has one, is a real one: hours 00–23, minutes 00–59 (RFC 3339 §5.6),
// which time.Parse does not check.
func validOffset(s string) bool {
	if n := len(s); n >= 6 && (s[n-6] == '+' || s[n-6] == '-') && s[n-3] == ':' {
		h := (int(s[n-5])-'0')*10 + int(s[n-4]) - '0'
		m := (int(s[n-2])-'0')*10 + int(s[n-1]) - '0'
		return h <= 23 && m <= 59
	}
	return true
}

// ParseScheduledAt parses a scheduledAt value: an RFC 3339 time, in the
// future (up to ScheduleGrace in the past counts as now), at most
// MaxScheduleAhead after now. It returns the time in UTC, now itself for a
// time within the grace period, so that the caller can send at once when
// the result is not after now. The error is a validation *Error on the
// field "scheduledAt".
func ParseScheduledAt(s string, now time.Time) (*time.Time, error) {
	var v Validator
	t, err := time.Parse(time.RFC3339, s)
	// time.Parse also takes a comma before the fraction, which RFC 3339
	// §5.6 does not.
	if err == nil && (len(s) > maxTimeLength || !validOffset(s) || strings.Contains(s, ",")) {
		err = errors.New("not RFC 3339")
	}
	// Times are kept to the second, as they are shown; a fraction rounds
	// up, so that a message never goes out before the time asked for.
	if t.Truncate(time.Second) != t {
		t = t.Truncate(time.Second).Add(time.Second)
	}
	switch {
	case s == "":
		v.Add("scheduledAt", `must not be empty; give an RFC 3339 time such as "2026-11-22T10:00:00Z", or leave it out to send now`)
	case err != nil:
		v.Add("scheduledAt", `%q is not an RFC 3339 time with a time zone, such as "2026-11-22T10:00:00Z"`, s)
	case t.Before(now.Add(-ScheduleGrace)):
		v.Add("scheduledAt", "%s is in the past; give a future time, or leave scheduledAt out to send now", t.UTC().Format(time.RFC3339))
	case t.After(now.Add(MaxScheduleAhead)):
		v.Add("scheduledAt", "%s is more than 30 days ahead; a send may be scheduled at most 30 days in advance", t.UTC().Format(time.RFC3339))
	}
	if err := v.Err(); err != nil {
		return nil, err
	}
	if t.Before(now) {
		t = now
	}
	t = t.UTC()
	return &t, nil
}

// DueRecipient is what becomes of a scheduled message's recipient when its
// time comes (docs/api.md "Scheduled sends"): the accept's checks are made
// again, against what holds now. A sending domain that is gone or may no
// longer send makes it failed, for no mail leaves under a domain that is
// not verified; an address suppressed since makes it suppressed; otherwise
// it is queued for delivery. detail says why it finished unattempted ("" when
// queued), and event is the event to write.
func DueRecipient(domain string, status DomainStatus, domainFound, suppressed bool) (next RecipientStatus, event, detail string) {
	switch {
	case !domainFound:
		return RecipientFailed, EventEmailFailed, "not sent: the sending domain " + domain + " was removed from the account before the scheduled time"
	case !status.CanSend():
		return RecipientFailed, EventEmailFailed, "not sent: the sending domain " + domain + " is " + string(status) + ", not verified, at the scheduled time"
	case suppressed:
		return RecipientSuppressed, EventEmailSuppressed, ""
	}
	return RecipientQueued, EventEmailQueued, ""
}
