package ratelimit

import (
	"math"
	"time"

	"golang.org/x/time/rate"
)

// Decision is the answer for one request and what the RateLimit-* headers
// tell the client.
type Decision struct {
	Allowed bool
	// Limit is the account's burst: the requests it may make at once.
	Limit int
	// Remaining is the requests the account may still make at once, as
	// far as this node knows: its own share scaled by the node count.
	Remaining int
	// Reset is the time until the bucket is full again.
	Reset time.Duration
	// RetryAfter is the time until a request would pass; 0 when allowed.
	RetryAfter time.Duration
}

// Allow takes one request of accountID at now from the account's bucket
// and says whether it may go on. The clock is the caller's, so that tests
// decide what time it is.
func (l *Limiter) Allow(accountID string, now time.Time) Decision {
	l.mu.Lock()
	defer l.mu.Unlock()
	lim := l.limitOf(accountID)
	want := l.shareOf(lim)
	b := l.buckets[accountID]
	switch {
	case b == nil:
		b = &bucket{tb: rate.NewLimiter(rate.Limit(want.rate), want.burst), share: want}
		l.buckets[accountID] = b
	case b.share != want:
		b.tb.SetLimitAt(now, rate.Limit(want.rate))
		b.tb.SetBurstAt(now, want.burst)
		b.share = want
	}

	allowed := b.tb.AllowN(now, 1)
	tokens := max(0, b.tb.TokensAt(now))
	d := Decision{
		Allowed: allowed,
		Limit:   lim.Burst,
		// Whole tokens only: a client told it has one request left gets
		// it through this node.
		Remaining: min(lim.Burst, int(math.Floor(tokens))*l.nodes),
		Reset:     seconds((float64(want.burst) - tokens) / want.rate),
	}
	if !allowed {
		d.RetryAfter = seconds((1 - tokens) / want.rate)
	}
	return d
}

func seconds(s float64) time.Duration {
	return time.Duration(max(0, s) * float64(time.Second))
}
