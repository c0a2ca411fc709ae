package submission

import (
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestAuthLimiterDelays: no delay within the budget; past it the delay
// doubles from the first up to the most; the debt is capped, so that the
// address is whole again soon after its failures stop; forgotten when whole.
func TestAuthLimiterDelays(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	var mu sync.Mutex
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	advance := func(d time.Duration) { mu.Lock(); defer mu.Unlock(); now = now.Add(d) }
	l := newAuthLimiter(5, 10*time.Second, 500*time.Millisecond, 5*time.Second, clock)

	var got []time.Duration
	for range 12 {
		got = append(got, l.delay("a"))
		l.failed("a")
	}
	ms := time.Millisecond
	want := []time.Duration{0, 0, 0, 0, 0, 500 * ms, 1000 * ms, 2000 * ms, 4000 * ms, 5000 * ms, 5000 * ms, 5000 * ms}
	if !slices.Equal(got, want) {
		t.Errorf("delays = %v, want %v", got, want)
	}
	if d := l.delay("b"); d != 0 {
		t.Errorf("another address delayed %v", d)
	}

	// Debt capped at -5: after 60 s (6 tokens) the next login is free.
	advance(50 * time.Second)
	if d := l.delay("a"); d == 0 {
		t.Error("not delayed while in debt")
	}
	advance(10 * time.Second)
	if d := l.delay("a"); d != 0 {
		t.Errorf("delayed %v once the capped debt is paid", d)
	}

	// However long and fast an address failed, a minute after its last
	// failure it is answered at once.
	for range 30 {
		l.failed("c")
		advance(time.Second)
	}
	advance(59 * time.Second)
	if d := l.delay("c"); d != 0 {
		t.Errorf("delayed %v a minute after the last of many failures", d)
	}

	// Whole again after long enough, and then forgotten at a sweep.
	advance(time.Hour)
	l.failed("b")
	if n := l.size(); n != 1 {
		t.Errorf("%d addresses remembered after the sweep, want 1 (b)", n)
	}
}

func TestReplyText(t *testing.T) {
	for in, want := range map[string]string{
		"plain":                  "plain",
		"two\r\nlines":           "two  lines",
		"250 fake\r\n250 reply":  "250 fake  250 reply",
		"ünïcode":                "?n?code",
		"nul\x00and\x7fdel":      "nulanddel",
		strings.Repeat("x", 999): strings.Repeat("x", maxReplyText-3) + "...",
	} {
		if got := replyText(in); got != want {
			t.Errorf("replyText(%q) = %q, want %q", in, got, want)
		}
	}
}
