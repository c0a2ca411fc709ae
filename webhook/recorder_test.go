package webhook

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/mailroom/mailroom"
	"github.com/mailroom/mailroom/poll"
)

// recordingStore is a Store whose RecordWebhookOutcomes the test controls:
// the recorder's batching and its patience with an outage are about the
// calls it makes, which a real store does not show.
type recordingStore struct {
	Store
	mu    sync.Mutex
	calls [][]*mailroom.WebhookOutcome
	// gate, when set, holds the first call until it is closed.
	gate chan struct{}
	// fail answers the call numbered n (from 0), nil for success.
	fail func(n int, outcomes []*mailroom.WebhookOutcome) error
}

func (s *recordingStore) RecordWebhookOutcomes(_ context.Context, outcomes []*mailroom.WebhookOutcome, _ time.Time) error {
	s.mu.Lock()
	n := len(s.calls)
	s.calls = append(s.calls, outcomes)
	s.mu.Unlock()
	if n == 0 && s.gate != nil {
		<-s.gate
	}
	if s.fail != nil {
		return s.fail(n, outcomes)
	}
	return nil
}

func (s *recordingStore) callSizes() []int {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []int
	for _, c := range s.calls {
		out = append(out, len(c))
	}
	return out
}

func outcome(id string) *mailroom.WebhookOutcome {
	return &mailroom.WebhookOutcome{Delivery: &mailroom.WebhookDelivery{ID: id},
		Attempt: &mailroom.WebhookAttempt{EventID: "evt_" + id}}
}

// startRecorder runs a recorder on store until the returned drain is
// called; drain waits until it has written everything.
func startRecorder(t *testing.T, store Store) (*recorder, func()) {
	ctx, cancel := context.WithCancel(context.Background())
	d := &Dispatcher{Store: store, Log: testLog(t), Now: time.Now}
	r := &recorder{d: d, stop: ctx, signal: make(chan struct{}, 1), closed: make(chan struct{})}
	done := make(chan struct{})
	go func() { defer close(done); r.run() }()
	var once sync.Once
	drain := func() { once.Do(func() { cancel(); close(r.closed); <-done }) }
	t.Cleanup(drain)
	return r, drain
}

// A lone outcome is written at once; those that finish while a write is
// under way go together in the next.
func TestRecorderBatchesWhatFinishesDuringAWrite(t *testing.T) {
	store := &recordingStore{gate: make(chan struct{})}
	r, drain := startRecorder(t, store)
	r.add(outcome("a"))
	poll.Until(t, 10*time.Second, "the first write", func() bool { return len(store.callSizes()) == 1 })
	for _, id := range []string{"b", "c", "d", "e", "f"} {
		r.add(outcome(id))
	}
	close(store.gate)
	poll.Until(t, 10*time.Second, "the second write", func() bool { return len(store.callSizes()) == 2 })
	drain()
	if got := store.callSizes(); len(got) != 2 || got[0] != 1 || got[1] != 5 {
		t.Fatalf("writes of %v outcomes, want [1 5]", got)
	}
}

// While storage is unavailable the recorder tries again, and the outcome
// is written once it answers; an outcome storage refuses for another
// reason is written alone, so that it does not take its batch with it.
func TestRecorderWaitsOutAnOutage(t *testing.T) {
	down := mailroom.Unavailable(errors.New("connection refused"))
	store := &recordingStore{fail: func(n int, _ []*mailroom.WebhookOutcome) error {
		if n < 2 {
			return down
		}
		return nil
	}}
	r, drain := startRecorder(t, store)
	r.add(outcome("a"))
	poll.Until(t, 10*time.Second, "the write after the outage", func() bool { return len(store.callSizes()) == 3 })
	drain()
	if got := store.callSizes(); len(got) != 3 {
		t.Fatalf("writes %v, want 3 (two refused, one through)", got)
	}

	bad := errors.New("constraint violated")
	store = &recordingStore{gate: make(chan struct{}), fail: func(_ int, o []*mailroom.WebhookOutcome) error {
		for _, x := range o {
			if x.Delivery.ID == "bad" {
				return bad
			}
		}
		return nil
	}}
	r, drain = startRecorder(t, store)
	r.add(outcome("first"))
	poll.Until(t, 10*time.Second, "the first write", func() bool { return len(store.callSizes()) == 1 })
	r.add(outcome("good"))
	r.add(outcome("bad"))
	close(store.gate)
	drain()
	if got := store.callSizes(); len(got) != 4 || got[1] != 2 || got[2] != 1 || got[3] != 1 {
		t.Fatalf("writes %v, want [1 2 1 1]: the refused batch written one by one", got)
	}
}
