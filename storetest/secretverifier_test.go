package storetest_test

import (
	"bytes"
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/mailroom/mailroom"
	"github.com/mailroom/mailroom/sqlstore"
	"github.com/mailroom/mailroom/storetest"
)

var t0 = time.Date(2026, 11, 29, 10, 0, 0, 0, time.UTC)

// TestSecretVerifier: a store keeps the first verifier of the secret key
// it is given and hands it back to every later start, its own node's or
// another's (docs/api.md "One secret key per store"); of nodes starting at
// once with different keys, exactly one verifier is kept and all of them
// are told the same one.
func TestSecretVerifier(t *testing.T) {
	ctx := context.Background()
	first, second := bytes.Repeat([]byte{1}, 32), bytes.Repeat([]byte{2}, 32)
	storetest.Each(t, func(t *testing.T, e storetest.Engine) {
		t.Run("kept", func(t *testing.T) {
			open, _ := storetest.Reopenable(t, e)
			a := open()
			if v, err := a.SecretVerifier(ctx); err != nil || v != nil {
				t.Fatalf("a new store's verifier: %x, %v; want none", v, err)
			}
			stored, written, err := a.EnsureSecretVerifier(ctx, first, nil)
			if err != nil || !written || !bytes.Equal(stored, first) {
				t.Fatalf("first start: stored %x, written %v, %v", stored, written, err)
			}
			stored, written, err = a.EnsureSecretVerifier(ctx, first, nil)
			if err != nil || written || !bytes.Equal(stored, first) {
				t.Fatalf("restart with the same key: stored %x, written %v, %v", stored, written, err)
			}
			// Another node of the store, with another key.
			b := open()
			stored, written, err = b.EnsureSecretVerifier(ctx, second, nil)
			if err != nil || written || !bytes.Equal(stored, first) {
				t.Fatalf("another key: stored %x, written %v, %v; want the first kept", stored, written, err)
			}
			if v, err := b.SecretVerifier(ctx); err != nil || !bytes.Equal(v, first) {
				t.Fatalf("verifier read back: %x, %v", v, err)
			}
		})
		// A store from before the verifier that already holds a sealed
		// DKIM key takes the verifier of a key that opens it only.
		t.Run("store from before", func(t *testing.T) {
			open, _ := storetest.Reopenable(t, e)
			s := open()
			acct := storetest.NewAccount(t, s, "acme")
			d := storetest.NewDomain(acct, "shop.example", t0)
			if err := s.CreateDomain(ctx, d, mailroom.DefaultMaxDomains); err != nil {
				t.Fatal(err)
			}
			var asked [][]byte
			opensNot := func(sealed, associatedData []byte) bool { asked = append(asked, sealed, associatedData); return false }
			_, written, err := s.EnsureSecretVerifier(ctx, second, opensNot)
			if !errors.Is(err, sqlstore.ErrSealedUnderAnotherKey) || written {
				t.Fatalf("a key that opens nothing stored: written %v, %v; want ErrSealedUnderAnotherKey", written, err)
			}
			if len(asked) != 2 || !bytes.Equal(asked[0], d.DKIMPrivateKeySealed) || string(asked[1]) != d.ID {
				t.Fatalf("asked to open %q, want the domain's sealed key with its id", asked)
			}
			if v, err := s.SecretVerifier(ctx); err != nil || v != nil {
				t.Fatalf("the refused key's verifier was stored: %x, %v", v, err)
			}
			opensIt := func(sealed, associatedData []byte) bool { return true }
			stored, written, err := s.EnsureSecretVerifier(ctx, first, opensIt)
			if err != nil || !written || !bytes.Equal(stored, first) {
				t.Fatalf("a key that opens the stored one: stored %x, written %v, %v", stored, written, err)
			}
			// Once written, the verifier alone decides.
			if stored, _, err := s.EnsureSecretVerifier(ctx, second, opensIt); err != nil || !bytes.Equal(stored, first) {
				t.Fatalf("after the verifier: stored %x, %v", stored, err)
			}
		})
		t.Run("nodes starting at once", func(t *testing.T) {
			open, _ := storetest.Reopenable(t, e)
			stores := []interface {
				EnsureSecretVerifier(context.Context, []byte, func(sealed, associatedData []byte) bool) ([]byte, bool, error)
			}{open(), open(), open(), open()}
			var wg sync.WaitGroup
			results := make([][]byte, 2*len(stores))
			wrote := make([]bool, len(results))
			errs := make([]error, len(results))
			for i := range results {
				key := first
				if i%2 == 1 {
					key = second
				}
				wg.Go(func() { results[i], wrote[i], errs[i] = stores[i%len(stores)].EnsureSecretVerifier(ctx, key, nil) })
			}
			wg.Wait()
			writers := 0
			for i := range results {
				if errs[i] != nil {
					t.Fatalf("start %d: %v", i, errs[i])
				}
				if !bytes.Equal(results[i], results[0]) {
					t.Fatalf("starts were told different verifiers: %x and %x", results[0], results[i])
				}
				if wrote[i] {
					writers++
				}
			}
			if writers != 1 {
				t.Fatalf("%d starts wrote a verifier, want 1", writers)
			}
		})
	})
}
