package domain_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/mailroom/mailroom"
	"github.com/mailroom/mailroom/domain"
	"github.com/mailroom/mailroom/storetest"
)

// TestSetIPPool: a domain's pool is set by a name of pool form, in any
// case of the domain's name, and cleared with ""; a name no pool could
// have is refused and changes nothing, and so is an unknown domain.
func TestSetIPPool(t *testing.T) {
	storetest.Each(t, func(t *testing.T, eng storetest.Engine) {
		ctx := context.Background()
		store := eng.Open(t)
		acct := storetest.NewAccount(t, store, "acme")
		now := time.Date(2026, 11, 27, 10, 0, 0, 0, time.UTC)
		if err := store.CreateDomain(ctx, storetest.NewDomain(acct, "shop.example", now), 10); err != nil {
			t.Fatal(err)
		}
		svc := &domain.Service{Store: store, Now: func() time.Time { return now }}
		d, err := svc.SetIPPool(ctx, acct.ID, "Shop.Example.", "bulk_2")
		if err != nil || d.IPPool != "bulk_2" {
			t.Fatalf("set: %+v %v", d, err)
		}
		for _, bad := range []string{"bulk pool", "bulk=192.0.2.1", "é", strings.Repeat("p", 65)} {
			_, err := svc.SetIPPool(ctx, acct.ID, "shop.example", bad)
			if !mailroom.IsCode(err, mailroom.ECodeValidation) {
				t.Errorf("the pool %q: %v, want validation_error", bad, err)
			}
		}
		if d := storetest.Try(store.Domain(ctx, acct.ID, "shop.example")).Must(t); d.IPPool != "bulk_2" {
			t.Fatalf("refused names changed the pool to %q", d.IPPool)
		}
		if _, err := svc.SetIPPool(ctx, acct.ID, "other.example", "bulk"); !mailroom.IsCode(err, mailroom.ECodeNotFound) {
			t.Fatalf("an unknown domain: %v, want not_found", err)
		}
		if d, err := svc.SetIPPool(ctx, acct.ID, "shop.example", ""); err != nil || d.IPPool != "" {
			t.Fatalf("clear: %+v %v", d, err)
		}
	})
}
