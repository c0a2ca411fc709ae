// Package poll is the tests' one way to wait for something that happens
// on another goroutine or in another process: look again and again, a few
// milliseconds apart, until it holds or a deadline passes. A test never
// sleeps a fixed time for it to happen (too short on a loaded machine, too
// long everywhere else), and never waits without a deadline (a test that
// hangs says nothing about why).
package poll

import (
	"testing"
	"time"
)

// Until calls cond until it returns true, and fails the test if it has
// not within the given time. what names the awaited state, for the
// failure message ("the message delivered"). cond runs on the test's
// goroutine, so it may fail the test itself.
func Until(tb testing.TB, within time.Duration, what string, cond func() bool) {
	tb.Helper()
	if !Within(within, cond) {
		tb.Fatalf("not within %v: %s", within, what)
	}
}

// Within calls cond until it returns true or the time is up, and reports
// whether it did: for a test that must stop its own goroutines, or say
// what it saw last, before it fails.
func Within(within time.Duration, cond func() bool) bool {
	deadline := time.Now().Add(within)
	for wait := firstWait; !cond(); wait = min(2*wait, maxWait) {
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(wait) // polling with a deadline, not synchronising
	}
	return true
}

// The wait between looks starts short, so that a state that is about to
// hold is seen at once, and grows to maxWait, so that a long wait (a
// process starting, a retry coming due) does not spin on a machine the
// test shares with others.
const (
	firstWait = time.Millisecond
	maxWait   = 20 * time.Millisecond
)
