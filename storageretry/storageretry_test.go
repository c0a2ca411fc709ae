package storageretry

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mailroom/mailroom"
)

var down = mailroom.Unavailable(errors.New("connection refused"))

// quick is a policy that retries at once, so that the tests are about
// what is retried and when it ends, not about the backoff's length.
var quick = policy{timeout: 200 * time.Millisecond, firstWait: time.Millisecond, maxWait: 5 * time.Millisecond}

// returns runs f and fails the test if it has not returned within d.
func returns(t *testing.T, d time.Duration, what string, f func()) {
	t.Helper()
	done := make(chan struct{})
	go func() { defer close(done); f() }()
	select {
	case <-done:
	case <-time.After(d):
		t.Fatalf("%s: still running after %v", what, d)
	}
}

// A write that storage refuses as unavailable is tried again until it
// goes through.
func TestRetriesWhileUnavailable(t *testing.T) {
	var calls atomic.Int64
	err := quick.write(context.Background(), func(context.Context) error {
		if calls.Add(1) <= 3 {
			return down
		}
		return nil
	})
	if err != nil || calls.Load() != 4 {
		t.Fatalf("err %v after %d calls, want nil after 4", err, calls.Load())
	}
}

// Any other error is the write's own answer: it returns at once.
func TestOtherErrorsReturnAtOnce(t *testing.T) {
	bad := mailroom.Errorf(mailroom.ECodeAlreadyExists, "constraint violated")
	var calls atomic.Int64
	err := quick.write(context.Background(), func(context.Context) error { calls.Add(1); return bad })
	if !errors.Is(err, bad) || calls.Load() != 1 {
		t.Fatalf("err %v after %d calls, want %v after 1", err, calls.Load(), bad)
	}
}

// Once stop ends, the write is tried for the policy's timeout more, and
// then its error returns.
func TestStopEndsTheRetry(t *testing.T) {
	stop, cancel := context.WithCancel(context.Background())
	var calls atomic.Int64
	var err error
	returns(t, 10*time.Second, "Write after stop", func() {
		err = quick.write(stop, func(context.Context) error {
			if calls.Add(1) == 3 {
				cancel()
			}
			return down
		})
	})
	if !mailroom.IsCode(err, mailroom.ECodeUnavailable) {
		t.Fatalf("err %v, want the unavailable error", err)
	}
	if calls.Load() <= 3 {
		t.Fatalf("%d calls, want tries after the stop too (the drain's grace)", calls.Load())
	}
}

// A stop during a backoff wait ends the wait at once: the drain's limit
// does not start up to a backoff late.
func TestStopInterruptsTheWait(t *testing.T) {
	patient := policy{timeout: 50 * time.Millisecond, firstWait: time.Hour, maxWait: time.Hour}
	stop, cancel := context.WithCancel(context.Background())
	var calls atomic.Int64
	var err error
	returns(t, 10*time.Second, "Write stopped during an hour's wait", func() {
		err = patient.write(stop, func(context.Context) error {
			if calls.Add(1) == 1 {
				// The wait has not begun yet; it begins on this refusal.
				time.AfterFunc(20*time.Millisecond, cancel)
			}
			return down
		})
	})
	if !mailroom.IsCode(err, mailroom.ECodeUnavailable) || calls.Load() != 2 {
		t.Fatalf("err %v after %d calls, want the unavailable error after 2 (one more once stopped)", err, calls.Load())
	}
}

type key struct{}

// Each try gets a live context bounded by the timeout, with stop's values:
// a drain is when outcomes must still be written.
func TestTriesOutliveStop(t *testing.T) {
	stop, cancel := context.WithCancel(context.WithValue(context.Background(), key{}, "v"))
	cancel()
	err := quick.write(stop, func(ctx context.Context) error {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if ctx.Value(key{}) != "v" {
			return errors.New("stop's values are lost")
		}
		if dl, ok := ctx.Deadline(); !ok || time.Until(dl) > quick.timeout {
			return errors.New("a try is not bounded by the timeout")
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
