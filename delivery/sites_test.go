package delivery_test

import (
	"context"
	"log/slog"
	"testing"
	"time"

	"github.com/mailroom/mailroom"
	"github.com/mailroom/mailroom/sites"
	"github.com/mailroom/mailroom/storetest"
)

// The sites' state the runtime and the transport share: a policy that
// gives paced.example's site one message a minute.
func pacedSites(tb testing.TB) *sites.Tracker {
	tb.Helper()
	p, err := sites.ParsePolicy([]byte(`
[[site]]
name = "paced"
domains = ["paced.example"]
max_rate = 1
`))
	if err != nil {
		tb.Fatal(err)
	}
	return sites.New(p, sites.Options{Log: slog.New(slog.DiscardHandler)})
}

// recipientState is the stored state of message id's only recipient.
func recipientState(tb testing.TB, w *world, id string) *mailroom.Recipient {
	tb.Helper()
	m, _, err := w.store.Message(context.Background(), w.acct.ID, id)
	if err != nil || len(m.Recipients) != 1 {
		tb.Fatalf("message %s: %v %+v", id, err, m)
	}
	return m.Recipients[0]
}

// Mail for a site at its limit waits in the queue, unattempted, without
// being claimed again and again, and without holding mail for other sites
// (docs/api.md "How mail leaves"): of two messages to the paced site one goes,
// the other is handed back for the site's next place a minute later,
// and a message to another site sent meanwhile goes at once.
func TestMailForASiteAtItsRateWaitsUnclaimed(t *testing.T) {
	w := newWorld(t, storetest.SQLite.Open(t))
	w.mailDomain("paced.example")
	w.mailDomain("other.example")
	tracker := pacedSites(t)
	d, transport := newDeliverer(w.store, w.domains, realComposer(), w.dns.Addr(), w.mx.Port())
	defer transport.Close()
	transport.Sites, d.Sites = tracker, tracker

	now := time.Now()
	first := w.send(t, now, &mailroom.SendRequest{From: "orders@" + sendingDomain, To: []string{"a@paced.example"}, Subject: "1", Text: "one"})
	second := w.send(t, now, &mailroom.SendRequest{From: "orders@" + sendingDomain, To: []string{"b@paced.example"}, Subject: "2", Text: "two"})
	if n, err := d.DeliverDue(context.Background()); err != nil || n != 2 {
		t.Fatalf("first pass claimed %d (%v), want both messages", n, err)
	}
	// The two go side by side: whichever took the site's one place is
	// delivered, the other handed back.
	a, b := recipientState(t, w, first), recipientState(t, w, second)
	if a.Status != mailroom.RecipientDelivered {
		a, b = b, a
		first, second = second, first
	}
	if a.Status != mailroom.RecipientDelivered || a.Site != "paced" {
		t.Fatalf("one recipient should be delivered at site paced: %+v", a)
	}
	if b.Status != mailroom.RecipientQueued || b.Attempts != 0 {
		t.Fatalf("the other recipient: %+v, want queued and not attempted (handed back for the site's next place)", b)
	}

	// Claims meanwhile skip the paced site: a third message to it, due
	// now, is not claimed (claiming it only to hand it back is a busy
	// claim), and mail for another site flows.
	third := w.send(t, time.Now(), &mailroom.SendRequest{From: "orders@" + sendingDomain, To: []string{"d@paced.example"}, Subject: "4", Text: "four"})
	other := w.send(t, time.Now(), &mailroom.SendRequest{From: "orders@" + sendingDomain, To: []string{"c@other.example"}, Subject: "3", Text: "three"})
	claimed := 0
	for range 3 {
		n, err := d.DeliverDue(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		claimed += n
	}
	if claimed != 1 {
		t.Errorf("three passes claimed %d recipients, want 1 (the other site's): the paced site's mail must wait unclaimed", claimed)
	}
	if r := recipientState(t, w, third); r.Status != mailroom.RecipientQueued || r.Attempts != 0 {
		t.Errorf("third message's recipient: %+v, want queued, unattempted", r)
	}
	if r := recipientState(t, w, other); r.Status != mailroom.RecipientDelivered {
		t.Fatalf("other site's recipient: %+v, want delivered while the paced site waits", r)
	}
	if r := recipientState(t, w, second); r.Status != mailroom.RecipientQueued || r.Attempts != 0 {
		t.Fatalf("second message's recipient after more passes: %+v, want still queued, unattempted", r)
	}
	if got := len(w.mx.Messages()); got != 2 {
		t.Errorf("the receiver got %d messages, want 2 (the paced site's first, and the other site's)", got)
	}
}
