package poll

import (
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// A condition that comes to hold ends the wait.
func TestUntilReturnsOnceTheConditionHolds(t *testing.T) {
	var n atomic.Int64
	go func() {
		for range 5 {
			n.Add(1)
		}
	}()
	Until(t, 10*time.Second, "five increments", func() bool { return n.Load() == 5 })
}

// A condition that never holds ends the wait at the deadline, not before.
func TestWithinGivesUpAtTheDeadline(t *testing.T) {
	start := time.Now()
	calls := 0
	if Within(50*time.Millisecond, func() bool { calls++; return false }) {
		t.Fatal("Within reported a condition that never held")
	}
	if took := time.Since(start); took < 50*time.Millisecond || took > 5*time.Second {
		t.Fatalf("gave up after %v, want just past 50ms", took)
	}
	if calls < 3 {
		t.Fatalf("cond called %d times in 50ms, want it polled", calls)
	}
}

// fatalTB records Fatalf and unwinds with a panic that the test
// recovers, where testing.T would end the goroutine.
type fatalTB struct {
	testing.TB
	msg string
}

func (f *fatalTB) Helper() {}
func (f *fatalTB) Fatalf(format string, args ...any) {
	f.msg = fmt.Sprintf(format, args...)
	panic(goexit{})
}

type goexit struct{}

// Until fails the test at the deadline, naming what it waited for.
func TestUntilFailsTheTest(t *testing.T) {
	tb := &fatalTB{TB: t}
	func() {
		defer func() {
			if r := recover(); r != nil && r != (goexit{}) {
				panic(r)
			}
		}()
		Until(tb, 10*time.Millisecond, "the impossible", func() bool { return false })
	}()
	if !strings.Contains(tb.msg, "the impossible") || !strings.Contains(tb.msg, "10ms") {
		t.Fatalf("failure %q, want it to name what was awaited and for how long", tb.msg)
	}
}
