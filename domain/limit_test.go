package domain_test

import (
	"context"
	"testing"
	"time"

	"github.com/mailroom/mailroom"
	"github.com/mailroom/mailroom/domain"
	"github.com/mailroom/mailroom/storetest"
)

// TestFullAccountRefusedBeforeAKeyIsMade: a domain past the account's
// limit is refused by a count before its RSA key is generated, so that an
// account at its limit cannot spend the server's CPU by asking again and
// again. The service here has no sealer, which making a domain needs: a
// refusal that came after the key would not come at all.
func TestFullAccountRefusedBeforeAKeyIsMade(t *testing.T) {
	storetest.Each(t, func(t *testing.T, eng storetest.Engine) {
		ctx := context.Background()
		store := eng.Open(t)
		acct := storetest.NewAccount(t, store, "acme")
		now := time.Date(2026, 11, 27, 10, 0, 0, 0, time.UTC)
		for _, name := range []string{"a.example", "b.example"} {
			if err := store.CreateDomain(ctx, storetest.NewDomain(acct, name, now), 2); err != nil {
				t.Fatal(err)
			}
		}
		svc := &domain.Service{Store: store, Max: 2, Now: func() time.Time { return now }}
		_, err := svc.Add(ctx, acct.ID, "c.example")
		if !mailroom.IsCode(err, mailroom.ECodeValidation) {
			t.Fatalf("a third domain with a limit of two: %v, want validation_error", err)
		}
	})
}
