package mailroom

import "math"

// RateLimit is an account's request rate (docs/api.md "Limits") as a token bucket:
// it refills at Rate tokens per second up to Burst tokens, and each
// authenticated request takes one. Burst lets a client send a short flurry
// (a batch job starting) without being held to the steady rate.
//
// The zero value of a part means the operator never set it and the
// default applies, so that changing a default reaches every account that
// kept it.
type RateLimit struct {
	Rate  float64 // requests per second
	Burst int     // requests at once
}

// Defaults and bounds of an account's rate limit. The bounds catch typing
// mistakes (an extra zero or two): a rate above MaxRate is more than one
// node serves, so it would mean "no limit" in a confusing way.
const (
	DefaultRate  = 100.0
	DefaultBurst = 200
	MaxRate      = 100_000.0
	MaxBurst     = 1_000_000
)

// Effective is l with each part the operator never set replaced by its
// default: the limit that is enforced.
func (l RateLimit) Effective() RateLimit {
	if l.Rate == 0 {
		l.Rate = DefaultRate
	}
	if l.Burst == 0 {
		l.Burst = DefaultBurst
	}
	return l
}

// Limits is the rate limit enforced on a.
func (a *Account) Limits() RateLimit { return a.RateLimit.Effective() }

// ValidateRateLimit checks an operator's input for `mailroom accounts
// update`: a rate above zero (a rate of zero would lock the account out,
// which is what revoking its keys is for), a burst of at least one request
// (a bucket that holds less never lets a request through), and both within
// the bounds above.
func ValidateRateLimit(rate float64, burst int) error {
	var v Validator
	// Written so that NaN fails too: every comparison with NaN is false.
	if !(rate > 0 && rate <= MaxRate) || math.IsInf(rate, 0) {
		v.Add("rate", "must be a number of requests per second above 0 and at most %g, not %g", MaxRate, rate)
	}
	if burst < 1 || burst > MaxBurst {
		v.Add("burst", "must be a number of requests from 1 to %d, not %d", MaxBurst, burst)
	}
	return v.Err()
}
