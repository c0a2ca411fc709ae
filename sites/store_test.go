package sites_test

import (
	"context"
	"log/slog"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mailroom/mailroom"
	"github.com/mailroom/mailroom/poll"
	"github.com/mailroom/mailroom/sites"
	"github.com/mailroom/mailroom/storetest"
)

// Two nodes over one real store (docs/api.md "How mail leaves"): a site
// that three throttling episodes suspend on one node is suspended on the
// other within 10 s, through the store's site_suspensions, on both engines.
// The nodes run on the real clock, which the suspension's five minutes
// outlast; the three episodes are two seconds apart on the first node's
// clock, which the test moves by hand.
func TestSuspensionReachesTheOtherNodeThroughTheStore(t *testing.T) {
	storetest.Each(t, func(t *testing.T, e storetest.Engine) {
		store := e.Open(t)
		policy := mailroom.NewDeliveryPolicy()
		log := slog.New(slog.DiscardHandler)
		start := time.Now()
		var offset atomic.Int64
		clockA := func() time.Time { return time.Now().Add(time.Duration(offset.Load())) }
		a := sites.New(policy, sites.Options{Store: store, Now: clockA, Log: log})
		b := sites.New(policy, sites.Options{Store: store, Now: time.Now, Log: log})
		ctx, cancel := context.WithCancel(t.Context())
		defer cancel()
		go a.Run(ctx)
		go b.Run(ctx)

		profile := a.Site("gmail.com", []string{"gmail-smtp-in.l.google.com"})
		b.Site("gmail.com", []string{"gmail-smtp-in.l.google.com"})
		key := mailroom.SiteKey{Site: profile.Name}
		for i := range 3 {
			offset.Store(int64(time.Duration(2*i) * time.Second))
			a.Observe(key, mailroom.SiteEvent{Kind: mailroom.SiteThrottled, At: clockA(), Code: 421, Enhanced: "4.7.0",
				Text: "Try again later, closing connection.", MX: "gmail-smtp-in.l.google.com"})
		}
		if r := a.Reserve(key, clockA()); r.SuspendedUntil.IsZero() {
			t.Fatal("three episodes within a minute did not suspend the site on the node that saw them")
		}
		var until time.Time
		poll.Until(t, 10*time.Second, "the other node honours the suspension", func() bool {
			r := b.Reserve(key, time.Now())
			if r.Cancel != nil && r.SuspendedUntil.IsZero() {
				r.Cancel()
			}
			until = r.SuspendedUntil
			return !until.IsZero()
		})
		if d := until.Sub(start); d < 4*time.Minute || d > 6*time.Minute {
			t.Errorf("the other node's suspension ends %v after the start, want about 5 minutes", d)
		}
		if ready := b.ReadyAt("google", time.Now()); !ready.Equal(until) {
			t.Errorf("the other node's ReadyAt = %v, want the suspension's end %v", ready, until)
		}
	})
}
