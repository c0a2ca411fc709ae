package webhook

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/mailroom/mailroom"
	"github.com/mailroom/mailroom/poll"
	"github.com/mailroom/mailroom/storetest"
)

// A node that stops hands back the deliveries it claimed but has not
// started (another node takes them at once, not after the lease), and
// lets the attempts in flight finish and be recorded.
func TestShutdownReleasesUnstartedClaims(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, e storetest.Engine) {
		w := newWorld(t, e)
		release := make(chan struct{})
		rc := w.receiver(func(_ int, rw http.ResponseWriter, _ *http.Request) {
			<-release
			rw.WriteHeader(http.StatusOK)
		})
		ep, _ := w.endpoint(rc.URL())
		d := w.dispatcher()
		// Two at a time to the endpoint, and no poll: the test says when
		// to claim, so that the second claim takes two deliveries at once
		// while one attempt is in flight, and the second of them waits.
		d.PerEndpoint, d.Poll = 2, time.Hour
		stop := w.start(d)
		released := false
		unblock := func() {
			if !released {
				released = true
				close(release)
			}
		}
		t.Cleanup(unblock)

		first := w.testEvent(ep)
		rc.waitRequests(t, 1)
		queued := map[string]bool{}
		for range 2 {
			ev, err := mailroom.NewEvent(w.acct.ID, mailroom.EventWebhookTest, map[string]string{"n": "x"}, w.clock.Now())
			if err != nil {
				t.Fatal(err)
			}
			if err := w.store.InsertEventFor(context.Background(), ev, []string{ep.ID}); err != nil {
				t.Fatal(err)
			}
			queued[ev.ID] = true
		}
		d.Wake()
		started := rc.waitRequests(t, 2)[1].header.Get("webhook-id")
		if !queued[started] {
			t.Fatalf("second request for %s, want one of the queued events", started)
		}
		delete(queued, started)

		stopped := make(chan struct{})
		go func() { defer close(stopped); stop() }()
		// The waiting delivery is free for another node as soon as the
		// node stops, while its attempts in flight still hang.
		var taken []*mailroom.WebhookDelivery
		poll.Until(t, 10*time.Second, "the unstarted delivery handed back", func() bool {
			var err error
			taken, err = w.store.ClaimWebhookDeliveries(context.Background(), mailroom.WebhookClaim{
				Node: "node-b", Now: w.clock.Now(), Lease: time.Minute, Limit: 10, PerEndpoint: 10})
			if err != nil {
				t.Fatal(err)
			}
			return len(taken) > 0
		})
		if len(taken) != 1 || !queued[taken[0].Event.ID] {
			t.Fatalf("node-b claimed %d deliveries (%+v), want the one never started", len(taken), taken)
		}
		select {
		case <-stopped:
			t.Fatal("Run returned while attempts were in flight")
		default:
		}

		unblock()
		<-stopped
		got := w.attempts(ep)
		if len(got) != 2 {
			t.Fatalf("%d attempts recorded after the drain, want the 2 in flight: %+v", len(got), got)
		}
		for _, a := range got {
			if a.Status != mailroom.WebhookAttemptSucceeded || (a.EventID != first.ID && a.EventID != started) {
				t.Fatalf("attempt %+v", a)
			}
		}
		if n := len(rc.requests()); n != 2 {
			t.Fatalf("%d requests, want 2", n)
		}
	})
}
