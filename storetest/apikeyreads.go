package storetest

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mailroom/mailroom"
	"github.com/mailroom/mailroom/poll"
)

func init() {
	extraSuites = append(extraSuites, suite{"APIKeyReadsUnderLoad", testAPIKeyReadsUnderLoad})
}

// Reads of several keys at once, as concurrent requests make them, each
// get their own key (or not found for an id no key has), and a read that
// begins after a revocation has committed sees it: a store may share one
// query among concurrent reads, never an answer read before the caller
// asked (docs/api.md: revocation takes effect on the next request).
func testAPIKeyReadsUnderLoad(t *testing.T, s mailroom.Store) {
	ctx := context.Background()
	acct := NewAccount(t, s, "acme")
	var keys []*mailroom.APIKey
	for i := range 4 {
		_, k := mailroom.NewAPIKey(acct.ID, fmt.Sprintf("k%d", i), mailroom.Scopes{mailroom.ScopeSend}, t0)
		if err := s.CreateAPIKey(ctx, k); err != nil {
			t.Fatal(err)
		}
		keys = append(keys, k)
	}
	target := keys[0]
	var revoked atomic.Bool
	var afterRevocation atomic.Int64
	var wg sync.WaitGroup
	stop := make(chan struct{})
	for g := range 32 {
		wg.Go(func() {
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				if g%8 == 7 {
					_, err := s.APIKey(ctx, "0000000000000000")
					if !mailroom.IsCode(err, mailroom.ECodeNotFound) {
						t.Errorf("an unknown id: %v", err)
						return
					}
					continue
				}
				want := keys[(g+i)%len(keys)]
				after := revoked.Load() // read before the call begins
				got, err := s.APIKey(ctx, want.KeyID)
				switch {
				case err != nil:
					t.Errorf("read %s: %v", want.KeyID, err)
					return
				case got.KeyID != want.KeyID || got.Name != want.Name:
					t.Errorf("read %s, got %s (%s)", want.KeyID, got.KeyID, got.Name)
					return
				case want == target && after && got.RevokedAt == nil:
					t.Errorf("a read begun after the revocation committed saw the key active")
					return
				case want != target && got.RevokedAt != nil:
					t.Errorf("key %s revoked with another", got.KeyID)
					return
				}
				if after && want == target {
					afterRevocation.Add(1)
				}
			}
		})
	}
	if _, err := s.RevokeAPIKey(ctx, acct.ID, target.KeyID, t0); err != nil {
		t.Fatal(err)
	}
	revoked.Store(true)
	done := poll.Within(30*time.Second, func() bool { return afterRevocation.Load() >= 200 || t.Failed() })
	close(stop)
	wg.Wait()
	if !done {
		t.Fatalf("only %d reads of the revoked key in 30 s", afterRevocation.Load())
	}
}
