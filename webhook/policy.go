package webhook

import (
	"math/rand/v2"
	"time"
)

// RetryDelays are the waits before each retry of a failed delivery
// (docs/api.md "Webhooks and events"), Svix's schedule: a delivery is
// tried at most len+1 times over about 28 hours, then given up.
var RetryDelays = []time.Duration{
	5 * time.Second, 5 * time.Minute, 30 * time.Minute, 2 * time.Hour, 5 * time.Hour, 10 * time.Hour, 10 * time.Hour,
}

// NextAttempt returns when to try a delivery again after its
// attempt number attempt (1 for the first) failed at, or nil when that was
// the last. Each wait varies by up to a tenth either way, so that the
// retries of many events that failed together (an endpoint that was down)
// do not return together.
func NextAttempt(attempt int, at time.Time) *time.Time {
	if attempt < 1 || attempt > len(RetryDelays) {
		return nil
	}
	d := RetryDelays[attempt-1]
	d += time.Duration((rand.Float64()*0.2 - 0.1) * float64(d))
	next := at.Add(d)
	return &next
}

// AnswerSucceeded says whether an HTTP status is a success: any
// 2xx. A 3xx is not followed (its target was never checked) and counts as
// a failure, as every other status does.
func AnswerSucceeded(status int) bool { return status >= 200 && status < 300 }
