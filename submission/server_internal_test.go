package submission

import (
	"strings"
	"sync"
	"testing"
	"time"
)

func TestAuthLimiterDebtAndSweep(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	var mu sync.Mutex
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	advance := func(d time.Duration) { mu.Lock(); defer mu.Unlock(); now = now.Add(d) }
	l := newAuthLimiter(5, 10*time.Second, clock)

	// Twenty failures in flight together: all were let in, and the debt
	// is paid before the next try.
	for range 20 {
		if !l.allowed("a") {
			t.Fatal("refused before any failure was charged")
		}
	}
	for range 20 {
		l.failed("a")
	}
	advance(150 * time.Second) // 15 tokens: -15 + 15 = 0
	if l.allowed("a") {
		t.Error("allowed while in debt")
	}
	advance(10 * time.Second)
	if !l.allowed("a") {
		t.Error("not allowed once the debt is paid")
	}
	if !l.allowed("b") {
		t.Error("another address refused")
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
