package storetest_test

import (
	"bytes"
	"context"
	"sync"
	"testing"

	"github.com/mailroom/mailroom/storetest"
)

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
			stored, written, err := a.EnsureSecretVerifier(ctx, first)
			if err != nil || !written || !bytes.Equal(stored, first) {
				t.Fatalf("first start: stored %x, written %v, %v", stored, written, err)
			}
			stored, written, err = a.EnsureSecretVerifier(ctx, first)
			if err != nil || written || !bytes.Equal(stored, first) {
				t.Fatalf("restart with the same key: stored %x, written %v, %v", stored, written, err)
			}
			// Another node of the store, with another key.
			b := open()
			stored, written, err = b.EnsureSecretVerifier(ctx, second)
			if err != nil || written || !bytes.Equal(stored, first) {
				t.Fatalf("another key: stored %x, written %v, %v; want the first kept", stored, written, err)
			}
			if v, err := b.SecretVerifier(ctx); err != nil || !bytes.Equal(v, first) {
				t.Fatalf("verifier read back: %x, %v", v, err)
			}
		})
		t.Run("nodes starting at once", func(t *testing.T) {
			open, _ := storetest.Reopenable(t, e)
			stores := []interface {
				EnsureSecretVerifier(context.Context, []byte) ([]byte, bool, error)
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
				wg.Go(func() { results[i], wrote[i], errs[i] = stores[i%len(stores)].EnsureSecretVerifier(ctx, key) })
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
