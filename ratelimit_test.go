package mailroom

import (
	"math"
	"testing"
)

// What `mailroom accounts update` accepts: the edges pass, zero, negative,
// NaN, infinity and typing slips past the bounds do not, and each broken
// part is named.
func TestValidateRateLimit(t *testing.T) {
	for _, ok := range []RateLimit{{0.001, 1}, {2, 5}, {MaxRate, MaxBurst}} {
		if err := ValidateRateLimit(ok.Rate, ok.Burst); err != nil {
			t.Errorf("%+v refused: %v", ok, err)
		}
	}
	for _, c := range []struct {
		lim    RateLimit
		fields string
	}{
		{RateLimit{0, 5}, "rate"},
		{RateLimit{-1, 5}, "rate"},
		{RateLimit{math.NaN(), 5}, "rate"},
		{RateLimit{math.Inf(1), 5}, "rate"},
		{RateLimit{MaxRate * 10, 5}, "rate"},
		{RateLimit{2, 0}, "burst"},
		{RateLimit{2, MaxBurst + 1}, "burst"},
		{RateLimit{0, -1}, "rate,burst"},
	} {
		err := ValidateRateLimit(c.lim.Rate, c.lim.Burst)
		if err == nil || !IsCode(err, ECodeValidation) {
			t.Errorf("%+v accepted (%v)", c.lim, err)
			continue
		}
		got := ""
		for i, d := range err.(*Error).Details {
			if i > 0 {
				got += ","
			}
			got += d.Field
		}
		if got != c.fields {
			t.Errorf("%+v: fields %q, want %q", c.lim, got, c.fields)
		}
	}
}

// Parts never set follow the defaults; set parts are kept.
func TestEffectiveRateLimit(t *testing.T) {
	if got := (RateLimit{}).Effective(); got != (RateLimit{DefaultRate, DefaultBurst}) {
		t.Errorf("unset: %+v", got)
	}
	if got := (RateLimit{Rate: 2}).Effective(); got != (RateLimit{2, DefaultBurst}) {
		t.Errorf("rate only: %+v", got)
	}
	if got := (&Account{RateLimit: RateLimit{Burst: 5}}).Limits(); got != (RateLimit{DefaultRate, 5}) {
		t.Errorf("burst only: %+v", got)
	}
}
