package storetest

import (
	"context"
	"testing"

	"github.com/mailroom/mailroom"
)

func init() {
	extraSuites = append(extraSuites,
		suite{"APIKeyDomain", testAPIKeyDomain},
		suite{"DomainByID", testDomainByID},
	)
}

// A key's sending domain (migration 00021) comes back from every read of
// the key: the authenticating read, the list and the revocation's answer;
// a key without one reads as unrestricted.
func testAPIKeyDomain(t *testing.T, s mailroom.Store) {
	ctx := context.Background()
	acct := NewAccount(t, s, "acme")
	_, restricted := mailroom.NewAPIKey(acct.ID, "shop only", mailroom.Scopes{mailroom.ScopeSend}, t0)
	restricted.Domain = "shop.example"
	_, open := mailroom.NewAPIKey(acct.ID, "any domain", mailroom.Scopes{mailroom.ScopeSend}, t0)
	for _, k := range []*mailroom.APIKey{restricted, open} {
		if err := s.CreateAPIKey(ctx, k); err != nil {
			t.Fatal(err)
		}
	}
	if got := Try(s.APIKey(ctx, restricted.KeyID)).Must(t); got.Domain != "shop.example" {
		t.Fatalf("read back: domain %q, want shop.example", got.Domain)
	}
	if got := Try(s.APIKey(ctx, open.KeyID)).Must(t); got.Domain != "" {
		t.Fatalf("unrestricted key read back with domain %q", got.Domain)
	}
	keys, _ := Try2(s.ListAPIKeys(ctx, acct.ID, mailroom.Page{Limit: 10})).Must(t)
	domains := map[string]string{}
	for _, k := range keys {
		domains[k.KeyID] = k.Domain
	}
	if domains[restricted.KeyID] != "shop.example" || domains[open.KeyID] != "" || len(domains) != 2 {
		t.Fatalf("listed domains: %v", domains)
	}
	if got := Try(s.RevokeAPIKey(ctx, acct.ID, restricted.KeyID, t0)).Must(t); got.Domain != "shop.example" {
		t.Fatalf("revoked key's domain %q", got.Domain)
	}
}

// A domain is found by its id in its own account alone.
func testDomainByID(t *testing.T, s mailroom.Store) {
	ctx := context.Background()
	acme, globex := NewAccount(t, s, "acme"), NewAccount(t, s, "globex")
	d, other := NewDomain(acme, "example.com", t0), NewDomain(acme, "example.org", t0)
	for _, x := range []*mailroom.Domain{d, other} {
		if err := s.CreateDomain(ctx, x, mailroom.DefaultMaxDomains); err != nil {
			t.Fatal(err)
		}
	}
	if got := Try(s.DomainByID(ctx, acme.ID, d.ID)).Must(t); got.Name != "example.com" || got.ID != d.ID {
		t.Fatalf("by id: %+v", got)
	}
	_, err := s.DomainByID(ctx, globex.ID, d.ID)
	wantCode(t, err, mailroom.ECodeNotFound)
	_, err = s.DomainByID(ctx, acme.ID, mailroom.NewID(mailroom.PrefixDomain, t0))
	wantCode(t, err, mailroom.ECodeNotFound)
}
