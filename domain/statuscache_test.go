package domain_test

import (
	"context"
	"testing"
	"time"

	"github.com/mailroom/mailroom"
	"github.com/mailroom/mailroom/domain"
	"github.com/mailroom/mailroom/storetest"
)

// TestCheckSendingDomainReusesAnswers holds the sending-domain check to
// its documented staleness on a real SQLite store: a change written by
// someone else (another node, the command line) is seen once the cached
// answer is SendingDomainCacheTTL old, and a delete through this service
// is seen on the very next send.
func TestCheckSendingDomainReusesAnswers(t *testing.T) {
	ctx := context.Background()
	store := storetest.SQLite.Open(t)
	acct := storetest.NewAccount(t, store, "acme")
	now := time.Date(2026, 11, 27, 10, 0, 0, 0, time.UTC)
	svc := &domain.Service{Store: store, Now: func() time.Time { return now }}
	check := func(name string) error { _, err := svc.CheckSendingDomain(ctx, acct.ID, name); return err }
	mustSend := func(name, when string) {
		t.Helper()
		if err := check(name); err != nil {
			t.Fatalf("%s: %s refused: %v", when, name, err)
		}
	}
	mustRefuse := func(name, when string) {
		t.Helper()
		if err := check(name); !mailroom.IsCode(err, mailroom.ECodeDomainNotVerified) {
			t.Fatalf("%s: %s answered %v, want domain_not_verified", when, name, err)
		}
	}
	verified := func(name string) {
		t.Helper()
		d := storetest.NewDomain(acct, name, now.Add(time.Hour))
		d.Status, d.VerifiedAt = mailroom.DomainVerified, &now
		if err := store.CreateDomain(ctx, d, mailroom.DefaultMaxDomains); err != nil {
			t.Fatal(err)
		}
	}

	// Deleted behind the service's back: sends go on until the answer expires.
	verified("a.example")
	mustSend("a.example", "verified")
	if err := store.DeleteDomain(ctx, acct.ID, "a.example"); err != nil {
		t.Fatal(err)
	}
	now = now.Add(domain.SendingDomainCacheTTL - time.Millisecond)
	mustSend("a.example", "deleted by another node, within the TTL")
	now = now.Add(time.Millisecond)
	mustRefuse("a.example", "deleted by another node, the TTL over")

	// A name the account lacks is refused from the cache too, until it expires.
	mustRefuse("b.example", "not added")
	verified("b.example")
	mustRefuse("b.example", "added by another node, within the TTL")
	now = now.Add(domain.SendingDomainCacheTTL)
	mustSend("b.example", "added by another node, the TTL over")

	// Deleted through this node's service: refused at once.
	if err := svc.Delete(ctx, acct.ID, "b.example"); err != nil {
		t.Fatal(err)
	}
	mustRefuse("b.example", "deleted here")

	// One account's answer is not another's.
	other := storetest.NewAccount(t, store, "globex")
	verified("c.example")
	mustSend("c.example", "acme's own")
	if _, err := svc.CheckSendingDomain(ctx, other.ID, "c.example"); !mailroom.IsCode(err, mailroom.ECodeDomainNotVerified) {
		t.Fatalf("globex sending from acme's domain: %v", err)
	}
}
