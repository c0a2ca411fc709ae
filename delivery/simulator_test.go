package delivery_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/mailroom/mailroom"
	"github.com/mailroom/mailroom/storetest"
)

// TestTestAddressesBesideARealRecipient: one message to a real recipient
// and to test addresses is composed and signed once, like any; the real
// recipient's copy arrives, and only it; each test address gets its
// outcome from the delivery runtime (bounced 5.1.1 without a suppression,
// delivered then complained, deferred until --retry-min-delay and then
// delivered), on both engines.
func TestTestAddressesBesideARealRecipient(t *testing.T) {
	storetest.Each(t, func(t *testing.T, eng storetest.Engine) {
		w := newWorld(t, eng.Open(t))
		w.mailDomain("a.example")
		composer := &countingComposer{Composer: realComposer()}
		d, transport := newDeliverer(w.store, w.domains, composer, w.dns.Addr(), w.mx.Port())
		defer transport.Close()
		d.Reports = w.store
		ctx := context.Background()

		const (
			bounced    = "bounced+t1@simulator.invalid"
			complained = "complained+t1@simulator.invalid"
			deferred   = "deferred+t1@simulator.invalid"
		)
		id := w.send(t, time.Now(), &mailroom.SendRequest{From: "orders@" + sendingDomain,
			To: []string{"ann@a.example", bounced, complained, deferred}, Subject: "Hi", Text: "Hi"})
		deliverAll(t, d)

		if n := composer.calls.Load(); n != 1 {
			t.Errorf("composed %d times, want once for every recipient", n)
		}
		got := w.mx.Messages()
		if len(got) != 1 || !slices.Equal(got[0].Rcpts, []string{"ann@a.example"}) {
			t.Fatalf("the receiver got %+v, want ann's copy alone", got)
		}

		status := func() map[string]*mailroom.Recipient {
			m, err := w.store.ReportedMessage(ctx, id)
			if err != nil {
				t.Fatal(err)
			}
			out := map[string]*mailroom.Recipient{}
			for _, r := range m.Recipients {
				out[r.Address] = r
			}
			return out
		}
		rs := status()
		for addr, want := range map[string]mailroom.RecipientStatus{
			"ann@a.example": mailroom.RecipientDelivered, bounced: mailroom.RecipientBounced,
			complained: mailroom.RecipientComplained, deferred: mailroom.RecipientDeferred,
		} {
			if rs[addr].Status != want {
				t.Errorf("%s: %s, want %s", addr, rs[addr].Status, want)
			}
		}
		if r := rs[bounced]; r.SMTPCode != 550 || mailroom.EnhancedCode(r.SMTPResponse) != "5.1.1" {
			t.Errorf("bounced: %d %q, want a 550 5.1.1", r.SMTPCode, r.SMTPResponse)
		}
		// The retry comes at --retry-min-delay exactly, without jitter.
		if r := rs[deferred]; r.NextAttemptAt == nil || !r.NextAttemptAt.Equal(r.LastAttemptAt.Add(d.Retry.MinDelay)) {
			t.Errorf("deferred: next attempt %v after last %v, want %v later", r.NextAttemptAt, r.LastAttemptAt, d.Retry.MinDelay)
		}

		// After the first delay, the retry delivers.
		d.Now = func() time.Time { return time.Now().Add(d.Retry.MinDelay + time.Second) }
		deliverAll(t, d)
		if r := status()[deferred]; r.Status != mailroom.RecipientDelivered || r.Attempts != 2 {
			t.Errorf("deferred after its retry: %s after %d attempts", r.Status, r.Attempts)
		}
		if n := len(w.mx.Messages()); n != 1 {
			t.Errorf("the receiver got %d messages after the retry", n)
		}

		list, _, err := w.store.ListSuppressions(ctx, w.acct.ID, mailroom.Page{Limit: 100})
		if err != nil || len(list) != 0 {
			t.Errorf("suppressions: %v %+v", err, list)
		}
	})
}
