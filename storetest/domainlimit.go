package storetest

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/mailroom/mailroom"
)

func init() {
	extraSuites = append(extraSuites,
		suite{"DomainLimit", testDomainLimit},
		suite{"DomainLimitConcurrent", testDomainLimitConcurrent},
	)
}

// testDomainLimit: the domains up to the limit are stored, the one past
// it is refused naming the limit and not stored, the limit is per account,
// and deleting a domain frees its slot.
func testDomainLimit(t *testing.T, s mailroom.Store) {
	ctx := context.Background()
	acme, globex := NewAccount(t, s, "acme"), NewAccount(t, s, "globex")
	for _, name := range []string{"a.example", "b.example", "c.example"} {
		if err := s.CreateDomain(ctx, NewDomain(acme, name, t0), 3); err != nil {
			t.Fatalf("%s, within the limit: %v", name, err)
		}
	}
	if n := Try(s.CountDomains(ctx, acme.ID)).Must(t); n != 3 {
		t.Fatalf("counted %d domains, want 3", n)
	}
	err := s.CreateDomain(ctx, NewDomain(acme, "d.example", t0), 3)
	wantCode(t, err, mailroom.ECodeValidation)
	if !strings.Contains(err.Error(), "--max-domains") {
		t.Errorf("the refusal does not name the limit: %v", err)
	}
	_, err = s.Domain(ctx, acme.ID, "d.example")
	wantCode(t, err, mailroom.ECodeNotFound)

	// The limit is per account.
	if err := s.CreateDomain(ctx, NewDomain(globex, "d.example", t0), 3); err != nil {
		t.Fatalf("acme's domains counted against globex: %v", err)
	}
	// Deleting one makes room for one.
	if err := s.DeleteDomain(ctx, acme.ID, "b.example"); err != nil {
		t.Fatal(err)
	}
	if err := s.CreateDomain(ctx, NewDomain(acme, "d.example", t0), 3); err != nil {
		t.Fatalf("after a delete: %v", err)
	}
	wantCode(t, s.CreateDomain(ctx, NewDomain(acme, "e.example", t0), 3), mailroom.ECodeValidation)
	if n := Try(s.CountDomains(ctx, acme.ID)).Must(t); n != 3 {
		t.Fatalf("counted %d domains, want 3", n)
	}
}

// testDomainLimitConcurrent: creates racing on one account cannot pass the
// limit together (each counts under the account's lock), and exactly the
// limit's worth of them succeed. The racers start together, on several
// accounts in turn, so that without the lock two of them would count the
// same number nearly every time.
func testDomainLimitConcurrent(t *testing.T, s mailroom.Store) {
	ctx := context.Background()
	const max, racers = 3, 16
	for round := range 4 {
		acct := NewAccount(t, s, fmt.Sprintf("acme%d", round))
		var (
			wg      sync.WaitGroup
			mu      sync.Mutex
			created int
			others  []error
		)
		start := make(chan struct{})
		for i := range racers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				d := NewDomain(acct, fmt.Sprintf("d%d.example", i), t0)
				<-start
				err := s.CreateDomain(ctx, d, max)
				mu.Lock()
				defer mu.Unlock()
				switch {
				case err == nil:
					created++
				case !mailroom.IsCode(err, mailroom.ECodeValidation):
					others = append(others, err)
				}
			}()
		}
		close(start)
		wg.Wait()
		if len(others) > 0 {
			t.Fatalf("creates failed otherwise than by the limit: %v", others)
		}
		n := Try(s.CountDomains(ctx, acct.ID)).Must(t)
		if created != max || n != max {
			t.Fatalf("round %d: %d concurrent creates succeeded and %d domains are stored, want %d of each", round, created, n, max)
		}
	}
}
