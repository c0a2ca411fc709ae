package positive

import (
	"testing"
	"time"
)

func TestOr(t *testing.T) {
	for _, tc := range []struct{ v, want time.Duration }{
		{0, time.Minute}, {-time.Second, time.Minute}, {time.Nanosecond, time.Nanosecond}, {time.Hour, time.Hour},
	} {
		if got := Or(tc.v, time.Minute); got != tc.want {
			t.Errorf("Or(%v, 1m) = %v, want %v", tc.v, got, tc.want)
		}
	}
	if got := Or(0, 25); got != 25 {
		t.Errorf("Or(0, 25) = %d", got)
	}
	if got := Or(2.5, 1); got != 2.5 {
		t.Errorf("Or(2.5, 1) = %g", got)
	}
}
