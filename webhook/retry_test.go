package webhook

import (
	"net/http"
	"testing"
	"time"

	"github.com/mailroom/mailroom"
	"github.com/mailroom/mailroom/storetest"
)

// A receiver that answers 500 once gets the event again after the first
// retry delay, with the same webhook-id (consumers deduplicate on it) and
// a signature made anew; the attempts log shows the 500 and the 200.
func TestFailedDeliveryIsRetriedWithTheSameID(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, e storetest.Engine) {
		w := newWorld(t, e)
		rc := w.receiver(func(n int, rw http.ResponseWriter, _ *http.Request) {
			if n == 0 {
				rw.WriteHeader(http.StatusInternalServerError)
				rw.Write([]byte("database is down"))
				return
			}
			rw.WriteHeader(http.StatusOK)
		})
		ep, secret := w.endpoint(rc.URL())
		w.start(w.dispatcher())
		ev := w.testEvent(ep)

		failedAt := w.clock.Now()
		first := w.waitAttempts(ep, 1)[0]
		if first.Status != mailroom.WebhookAttemptFailed || first.StatusCode != 500 || first.Error != "HTTP 500" ||
			first.ResponseBody != "database is down" || first.NextAttemptAt == nil {
			t.Fatalf("first attempt %+v", first)
		}
		// 5 s, give or take the jitter of a tenth.
		if wait := first.NextAttemptAt.Sub(failedAt); wait < 4500*time.Millisecond || wait > 5500*time.Millisecond {
			t.Fatalf("retried %v after the failure, want about %v", wait, RetryDelays[0])
		}
		if got := len(rc.requests()); got != 1 {
			t.Fatalf("%d requests before the retry is due", got)
		}

		w.clock.Advance(6 * time.Second)
		reqs := rc.waitRequests(t, 2)
		if reqs[0].header.Get("webhook-id") != ev.ID || reqs[1].header.Get("webhook-id") != ev.ID {
			t.Fatalf("webhook-id %q then %q, want %s both times", reqs[0].header.Get("webhook-id"), reqs[1].header.Get("webhook-id"), ev.ID)
		}
		if reqs[0].header.Get("webhook-timestamp") == reqs[1].header.Get("webhook-timestamp") {
			t.Error("the retry has the first attempt's timestamp")
		}
		if err := reqs[1].verify(secretKey(t, secret), w.clock.Now()); err != nil {
			t.Fatalf("the retry does not verify: %v", err)
		}

		all := w.waitAttempts(ep, 2)
		if a := all[1]; a.Status != mailroom.WebhookAttemptSucceeded || a.StatusCode != 200 || a.Attempt != 2 ||
			a.EventID != ev.ID || a.NextAttemptAt != nil {
			t.Fatalf("second attempt %+v", a)
		}
	})
}
