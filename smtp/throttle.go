package smtp

import "github.com/mailroom/mailroom"

// throttleRule tells a reply that says "too fast" (mailroom.IsThrottle: a
// 421 at any stage, a 4.7.x other than greylisting, a provider's known
// rate text) from any other: it closes the connection, and the recipients
// wait for the site's next free place instead of an exponential retry
// (docs/api.md "How mail leaves"). To a delivery's first attempt, a plain
// 4.7.1 or 4.2.0 is greylisting instead (mailroom.IsGreylisting). A nil
// rule (no Sites) sees no throttles, as before sites were known.
type throttleRule func(status) bool

func newThrottleRule(firstAttempt bool) throttleRule {
	return func(st status) bool {
		// Code 0 is no reply at all: a network failure is not a throttle.
		if st.Code == 0 || !mailroom.IsThrottle(st.Code, st.Enhanced, st.Text) {
			return false
		}
		return !(firstAttempt && mailroom.IsGreylisting(st.Code, st.Enhanced, st.Text, true))
	}
}

// mark sets the reason of st when it is a throttle, and reports whether.
func (r throttleRule) mark(st *status) bool {
	if r == nil || !r(*st) {
		return false
	}
	st.Reason = mailroom.DeferThrottled
	return true
}
