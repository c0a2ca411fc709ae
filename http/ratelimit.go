package http

import (
	"math"
	"net/http"
	"strconv"
	"time"

	"github.com/mailroom/mailroom"
)

// admit takes one request of the account from its rate limit (docs/api.md "Limits")
// and writes the RateLimit-* headers that every authenticated response
// carries, a 429 included. Over the limit it answers 429 rate_limited with
// Retry-After and reports false. It runs before the scope check and before
// the body is read, so that a client over its rate costs the service the
// key check and little more: over HTTP/2, at most a quarter of a second
// discarding what is left of its body (lingerAfterAnswer), so that the 429
// reaches clients that drop an answer to a stream reset mid-upload.
func (s *Server) admit(w http.ResponseWriter, r *http.Request, accountID string) bool {
	if s.Limiter == nil {
		return true
	}
	d := s.Limiter.Allow(accountID, s.now())
	h := w.Header()
	h.Set("RateLimit-Limit", strconv.Itoa(d.Limit))
	h.Set("RateLimit-Remaining", strconv.Itoa(d.Remaining))
	h.Set("RateLimit-Reset", strconv.Itoa(wholeSeconds(d.Reset)))
	if d.Allowed {
		return true
	}
	s.metrics.rateLimited.WithLabelValues(accountID).Inc()
	if r.ContentLength != 0 {
		// The body is never read: end the connection after this answer,
		// or net/http would first wait for (and discard) the body of a
		// client that sends it slowly or not at all.
		closeAfterAnswer(w, r)
	}
	writeError(w, r, &mailroom.Error{
		Code:       mailroom.ECodeRateLimited,
		Message:    "Too many requests for this account; retry after the number of seconds in Retry-After.",
		RetryAfter: time.Duration(max(1, wholeSeconds(d.RetryAfter))) * time.Second,
	})
	return false
}

// wholeSeconds rounds d up: a client that waits the number it is told
// must find the bucket refilled, not a few milliseconds short.
func wholeSeconds(d time.Duration) int {
	return int(math.Ceil(d.Seconds()))
}
