package webhook

import (
	"context"
	"testing"

	"github.com/mailroom/mailroom/postgres"
	"github.com/mailroom/mailroom/sqlstore"
	"github.com/mailroom/mailroom/storetest"
)

// Two nodes sharing storage share the outbox: every event reaches the
// endpoint, and none twice while every attempt succeeds (the claims
// lease each delivery to one node; on PostgreSQL with SKIP LOCKED, so the
// nodes do not wait for each other's claims).
func TestTwoNodesDeliverEachEventOnce(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, e storetest.Engine) {
		var a, b *sqlstore.Store
		if e.Name == storetest.Postgres.Name {
			// Two nodes are two connection pools on one database.
			url := storetest.NewPostgresDatabase(t)
			for _, s := range []**sqlstore.Store{&a, &b} {
				store, err := postgres.Open(context.Background(), url)
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { store.Close() })
				*s = store
			}
		} else {
			// SQLite has one node; two dispatchers on its store still
			// must not deliver an event twice.
			a = e.Open(t)
			b = a
		}
		w := newWorldOn(t, a)
		rc := w.receiver(nil)
		ep, _ := w.endpoint(rc.URL())
		const events = 60
		for range events {
			w.testEvent(ep)
		}
		one, two := w.dispatcher(), w.dispatcher()
		two.Store, two.Node = b, "node-b"
		one.PerEndpoint, two.PerEndpoint = 4, 4
		w.start(one)
		w.start(two)

		reqs := rc.waitRequests(t, events)
		w.waitAttempts(ep, events)
		seen := map[string]bool{}
		for _, r := range rc.requests() {
			id := r.header.Get("webhook-id")
			if seen[id] {
				t.Fatalf("event %s delivered twice", id)
			}
			seen[id] = true
		}
		if len(reqs) != events || len(seen) != events {
			t.Fatalf("%d requests for %d events, want %d", len(rc.requests()), len(seen), events)
		}
	})
}
