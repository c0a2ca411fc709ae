package http

import (
	"context"
	"errors"
	"net/http"
	"sync"
	"time"
)

// StorageBudget bounds the storage work of one request (docs/api.md "Limits" "Staying
// up"): past it the request's context ends, storage gives up, and the
// client gets 503 service_unavailable with Retry-After instead of a wait as
// long as the write timeout. Reading the request body does not count
// against it, so that a slow client uploading a large body is not turned
// away for its link's speed.
const StorageBudget = 10 * time.Second

// errStorageBudget is the cause of a request context ended by its budget.
var errStorageBudget = errors.New("the request's storage budget ran out")

// budget is a request's storage deadline, which can be paused while the
// body is read.
type budget struct {
	mu     sync.Mutex
	timer  *time.Timer
	d      time.Duration
	cancel context.CancelCauseFunc
}

type budgetKey struct{}

// withBudget gives r a context that ends after d of storage work, and a
// function that releases it once the request is answered.
func withBudget(r *http.Request, d time.Duration) (*http.Request, func()) {
	ctx, cancel := context.WithCancelCause(r.Context())
	b := &budget{d: d, cancel: cancel}
	b.timer = time.AfterFunc(d, func() { cancel(errStorageBudget) })
	return r.WithContext(context.WithValue(ctx, budgetKey{}, b)), func() {
		b.timer.Stop()
		cancel(nil)
	}
}

// pauseBudget stops r's budget while its body is read; the returned
// function starts it again, whole: the budget is for the work after the
// read.
func pauseBudget(r *http.Request) (resume func()) {
	b, _ := r.Context().Value(budgetKey{}).(*budget)
	if b == nil {
		return func() {}
	}
	b.mu.Lock()
	b.timer.Stop()
	b.mu.Unlock()
	return func() {
		b.mu.Lock()
		defer b.mu.Unlock()
		b.timer.Reset(b.d)
	}
}
