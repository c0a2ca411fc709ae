package smtpservertest

import (
	"runtime"
	"testing"
	"time"
)

// Eventually polls cond until it holds, or fails the test with what once
// d has passed.
func Eventually(t testing.TB, d time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("after %v: %s", d, what)
		}
		runtime.Gosched()
		time.Sleep(5 * time.Millisecond)
	}
}
