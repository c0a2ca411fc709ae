package http_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/mailroom/mailroom"
	"github.com/mailroom/mailroom/client"
	"github.com/mailroom/mailroom/client/api"
	"github.com/mailroom/mailroom/delivery"
	mhttp "github.com/mailroom/mailroom/http"
	"github.com/mailroom/mailroom/storetest"
)

// sitesSeen passes deliveries to the real transport and remembers the
// site of each result, naming one ("example-provider") where the transport
// left it empty: a transport that runs without the sites tracker
// `mailroom serve` gives it knows no site.
type sitesSeen struct {
	mailroom.Transport
	mu    sync.Mutex
	sites map[string]string // by recipient
}

func (s *sitesSeen) Deliver(ctx context.Context, d *mailroom.Delivery) []mailroom.RecipientResult {
	out := s.Transport.Deliver(ctx, d)
	s.mu.Lock()
	defer s.mu.Unlock()
	for i := range out {
		if out[i].Site == "" {
			out[i].Site = "example-provider"
		}
		s.sites[out[i].Recipient] = out[i].Site
	}
	return out
}

func (s *sitesSeen) site(rcpt string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.sites[rcpt]
}

// A greylisted recipient shows in the log why it waits, for how long and
// where it goes (docs/api.md "The email log"): lastDeferralReason, its
// nextAttemptAt and the site of its attempt, in the API's JSON and as the
// Go client decodes it; delivered on the retry, it keeps the reason as
// history.
func TestLogShowsDeferralReasonSiteAndNextAttempt(t *testing.T) {
	storetest.Each(t, func(t *testing.T, eng storetest.Engine) {
		seen := &sitesSeen{sites: map[string]string{}}
		e := newEnvWithStore(t, eng.Open(t), func(_ *mhttp.Server, d *delivery.Deliverer) {
			seen.Transport = d.Transport
			d.Transport = seen
		})
		e.verifiedDomain(t, "shop.example")
		e.mailDomain("example.net")
		e.mx.ReplyOnce("ann@example.net", 451, "4.7.1", "Greylisted, please try again in 5 minutes")
		id := e.sendOne(t, "ann@example.net")
		m := e.waitStatus(t, id, "deferred")
		rec := recipient0(m)
		site := seen.site("ann@example.net")
		if rec["lastDeferralReason"] != "greylisted" || rec["site"] != site || site == "" || rec["nextAttemptAt"] == nil ||
			rec["status"] != "deferred" {
			t.Fatalf("after the greylisting, the log shows %v; want lastDeferralReason greylisted, site %q and a nextAttemptAt", rec, site)
		}

		c := client.New(e.Base, e.admin, client.WithHTTPClient(e.HTTP))
		msg, err := c.GetMessage(context.Background(), id)
		if err != nil {
			t.Fatal(err)
		}
		r := msg.Recipients[0]
		next, _ := time.Parse(time.RFC3339, rec["nextAttemptAt"].(string))
		if r.LastDeferralReason == nil || *r.LastDeferralReason != api.DeferralGreylisted || r.Site == nil || *r.Site != site ||
			r.NextAttemptAt == nil || !r.NextAttemptAt.Equal(next) {
			t.Fatalf("the Go client decodes %+v", r)
		}

		e.clock.Advance(time.Hour)
		e.deliver.Wake()
		m = e.waitStatus(t, id, "delivered")
		if rec := recipient0(m); rec["lastDeferralReason"] != "greylisted" || rec["nextAttemptAt"] != nil || rec["site"] != site {
			t.Fatalf("delivered on the retry, the log shows %v; want the reason kept and no next attempt", rec)
		}
		// A recipient never deferred shows null.
		m = e.waitStatus(t, e.sendOne(t, "bob@example.net"), "delivered")
		if rec := recipient0(m); rec["lastDeferralReason"] != nil {
			t.Fatalf("a recipient never deferred shows lastDeferralReason %v", rec["lastDeferralReason"])
		}
	})
}
