package delivery_test

import (
	"context"
	"testing"
	"time"

	"github.com/mailroom/mailroom"
	"github.com/mailroom/mailroom/delivery"
	"github.com/mailroom/mailroom/storetest"
)

// A message leaves from its sending domain's pool: the Signer tells the
// runtime which, and a pool assigned while nodes run (`mailroom domains
// update --ip-pool`) is used within 10 s, the most a node signs with a
// domain it read before (docs/api.md "How mail leaves").
func TestSignedCarriesTheDomainsPool(t *testing.T) {
	w := newWorld(t, storetest.SQLite.Open(t))
	ctx := context.Background()
	start := time.Now()
	now := start
	signer := &delivery.Signer{Store: w.store, Domains: w.domains, Composer: realComposer(), Unsubscribe: unsubscribeLinks,
		Now: func() time.Time { return now }}
	id := w.send(t, start, &mailroom.SendRequest{From: "orders@" + sendingDomain, To: []string{"ann@a.example"},
		Subject: "Your receipt", Text: "Thanks."})
	sum := &mailroom.MessageSummary{ID: id, AccountID: w.acct.ID, Domain: sendingDomain, From: "orders@" + sendingDomain}
	pool := func() string {
		t.Helper()
		signed, err := signer.Signed(ctx, sum)
		if err != nil {
			t.Fatal(err)
		}
		return signed.IPPool
	}
	if got := pool(); got != "" {
		t.Fatalf("a domain with no pool sends from %q, want the default", got)
	}
	if _, err := w.domains.SetIPPool(ctx, w.acct.ID, sendingDomain, "bulk"); err != nil {
		t.Fatal(err)
	}
	now = start.Add(10 * time.Second)
	if got := pool(); got != "bulk" {
		t.Fatalf("10 s after the pool was set, the message leaves from %q, want bulk", got)
	}
	if _, err := w.domains.SetIPPool(ctx, w.acct.ID, sendingDomain, ""); err != nil {
		t.Fatal(err)
	}
	now = start.Add(20 * time.Second)
	if got := pool(); got != "" {
		t.Fatalf("cleared, the message leaves from %q, want the default", got)
	}
}
