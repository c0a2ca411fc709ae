package webhook

import (
	"net/http"
	"sync/atomic"
	"testing"

	"github.com/mailroom/mailroom/storetest"
)

// An endpoint that never answers holds only its own deliveries: another
// endpoint's arrive at once, long before the hanging attempts time out,
// and the hanging one gets no more attempts at a time than its cap.
func TestHangingEndpointDoesNotHoldBackOthers(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, e storetest.Engine) {
		w := newWorld(t, e)
		release := make(chan struct{})
		var hanging, most atomic.Int64
		slow := w.receiver(func(_ int, rw http.ResponseWriter, r *http.Request) {
			n := hanging.Add(1)
			defer hanging.Add(-1)
			for m := most.Load(); n > m && !most.CompareAndSwap(m, n); m = most.Load() {
			}
			select {
			case <-release:
			case <-r.Context().Done():
			}
		})
		fast := w.receiver(nil)
		slowEP, _ := w.endpoint(slow.URL())
		fastEP, _ := w.endpoint(fast.URL())
		d := w.dispatcher()
		d.PerEndpoint = 2
		w.start(d)
		// Registered after start, so it runs first: the hanging attempts
		// end before the dispatcher is waited for.
		t.Cleanup(func() { close(release) })

		for range 5 {
			w.testEvent(slowEP)
		}
		slow.waitRequests(t, 2)
		for range 3 {
			w.testEvent(fastEP)
		}
		fast.waitRequests(t, 3)
		if got := w.waitAttempts(fastEP, 3); got[0].Error != "" || got[2].Error != "" {
			t.Fatalf("fast endpoint's attempts %+v", got)
		}
		if n := len(slow.requests()); n != 2 || most.Load() > 2 {
			t.Fatalf("the hanging endpoint got %d requests, at most %d at once; want 2 (its cap)", n, most.Load())
		}
		if got := w.attempts(slowEP); len(got) != 0 {
			t.Fatalf("the hanging endpoint has attempts logged: %+v", got)
		}
	})
}
