package storetest

import (
	"context"
	"encoding/json"
	"sync"
	"testing"
	"time"

	"github.com/mailroom/mailroom"
)

func init() {
	extraSuites = append(extraSuites,
		suite{"Domains", testDomains},
		suite{"DomainIPPool", testDomainIPPool},
		suite{"DomainClaims", testDomainClaims},
		suite{"Events", testEvents},
	)
}

// NewDomain returns an unsaved pending domain of acct, due for a check at due.
func NewDomain(acct *mailroom.Account, name string, due time.Time) *mailroom.Domain {
	p := 10
	return &mailroom.Domain{
		ID: mailroom.NewID(mailroom.PrefixDomain, t0), AccountID: acct.ID, Name: name,
		Status: mailroom.DomainPending, DKIMSelector: "mr2611abcdef", DKIMPublicKey: "MIIB",
		DKIMPrivateKeySealed: []byte{1, 2, 3}, ReturnPathDomain: "bounces." + name, CreatedAt: t0,
		NextCheckAt: &due,
		Records: []mailroom.DNSRecord{
			{Purpose: mailroom.PurposeReturnPath, Type: "MX", Name: "bounces." + name, Value: "mx.test", Priority: &p, Required: true, Status: mailroom.RecordPending},
		},
	}
}

func testDomains(t *testing.T, s mailroom.Store) {
	ctx := context.Background()
	acme, globex := NewAccount(t, s, "acme"), NewAccount(t, s, "globex")
	d := NewDomain(acme, "example.com", t0)
	if err := s.CreateDomain(ctx, d, mailroom.DefaultMaxDomains); err != nil {
		t.Fatal(err)
	}
	wantCode(t, s.CreateDomain(ctx, NewDomain(acme, "example.com", t0), mailroom.DefaultMaxDomains), mailroom.ECodeAlreadyExists)
	// Another account may add the same name.
	if err := s.CreateDomain(ctx, NewDomain(globex, "example.com", t0), mailroom.DefaultMaxDomains); err != nil {
		t.Fatalf("a second account could not add the domain: %v", err)
	}

	got := Try(s.Domain(ctx, acme.ID, "example.com")).Must(t)
	if got.ID != d.ID || got.Records[0].Priority == nil || *got.Records[0].Priority != 10 || string(got.DKIMPrivateKeySealed) != "\x01\x02\x03" {
		t.Fatalf("stored domain differs: %+v", got)
	}
	_, err := s.Domain(ctx, acme.ID, "other.com")
	wantCode(t, err, mailroom.ECodeNotFound)

	// A check's outcome and its event land together.
	now := t0.Add(time.Hour)
	got.Status = mailroom.DomainVerified
	got.VerifiedAt, got.LastCheckedAt = &now, &now
	got.Records[0].Status, got.Records[0].Found = mailroom.RecordVerified, []string{"10 mx.test."}
	ev := Try(mailroom.NewEvent(acme.ID, mailroom.EventDomainVerified, map[string]string{"domain": "example.com"}, now)).Must(t)
	if err := s.SaveDomainCheck(ctx, got, ev); err != nil {
		t.Fatal(err)
	}
	again := Try(s.Domain(ctx, acme.ID, "example.com")).Must(t)
	if again.Status != mailroom.DomainVerified || !again.VerifiedAt.Equal(now) || again.Records[0].Found[0] != "10 mx.test." {
		t.Fatalf("check not saved: %+v", again)
	}
	events, _, err := s.ListEvents(ctx, acme.ID, mailroom.EventFilter{}, mailroom.Page{})
	if err != nil || len(events) != 1 || events[0].Type != mailroom.EventDomainVerified {
		t.Fatalf("event: %v %v", events, err)
	}

	for i := range 3 {
		if err := s.CreateDomain(ctx, NewDomain(acme, string(rune('a'+i))+".example.org", t0), mailroom.DefaultMaxDomains); err != nil {
			t.Fatal(err)
		}
	}
	page, next := Try2(s.ListDomains(ctx, acme.ID, mailroom.Page{Limit: 3})).Must(t)
	if len(page) != 3 || next == "" {
		t.Fatalf("first page: %d, next %q", len(page), next)
	}
	page, next = Try2(s.ListDomains(ctx, acme.ID, mailroom.Page{Limit: 3, Cursor: next})).Must(t)
	if len(page) != 1 || next != "" {
		t.Fatalf("second page: %d, next %q", len(page), next)
	}

	wantCode(t, s.DeleteDomain(ctx, globex.ID, "a.example.org"), mailroom.ECodeNotFound)
	if err := s.DeleteDomain(ctx, acme.ID, "example.com"); err != nil {
		t.Fatal(err)
	}
	wantCode(t, s.SaveDomainCheck(ctx, got, nil), mailroom.ECodeNotFound)
	if _, err := s.Domain(ctx, globex.ID, "example.com"); err != nil {
		t.Fatalf("deleting one account's domain touched the other's: %v", err)
	}
}

// A domain's pool of source addresses is set, read by every reading of
// the domain (the delivery Signer's, the API's list and the checks'
// claims), cleared, and kept by a check; another account's domain of the
// same name is not touched.
func testDomainIPPool(t *testing.T, s mailroom.Store) {
	ctx := context.Background()
	acme, globex := NewAccount(t, s, "acme"), NewAccount(t, s, "globex")
	for _, acct := range []*mailroom.Account{acme, globex} {
		if err := s.CreateDomain(ctx, NewDomain(acct, "example.com", t0), mailroom.DefaultMaxDomains); err != nil {
			t.Fatal(err)
		}
	}
	if d := Try(s.Domain(ctx, acme.ID, "example.com")).Must(t); d.IPPool != "" {
		t.Fatalf("a new domain has the pool %q, want the default", d.IPPool)
	}
	set := Try(s.UpdateDomain(ctx, acme.ID, "example.com", mailroom.DomainUpdate{IPPool: new("bulk")})).Must(t)
	if set.IPPool != "bulk" || set.Name != "example.com" || set.AccountID != acme.ID || len(set.Records) != 1 {
		t.Fatalf("set answered %+v", set)
	}
	if d := Try(s.Domain(ctx, acme.ID, "example.com")).Must(t); d.IPPool != "bulk" {
		t.Fatalf("read back the pool %q, want bulk", d.IPPool)
	}
	if d := Try(s.Domain(ctx, globex.ID, "example.com")).Must(t); d.IPPool != "" {
		t.Fatalf("another account's domain got the pool %q", d.IPPool)
	}
	listed, _ := Try2(s.ListDomains(ctx, acme.ID, mailroom.Page{})).Must(t)
	if len(listed) != 1 || listed[0].IPPool != "bulk" {
		t.Fatalf("listed %+v", listed)
	}
	// A check's claim reads it, and saving the check keeps it.
	claimed := Try(s.ClaimDueDomains(ctx, t0, time.Minute, 10)).Must(t)
	var mine *mailroom.Domain
	for _, d := range claimed {
		if d.AccountID == acme.ID {
			mine = d
		}
	}
	if mine == nil || mine.IPPool != "bulk" {
		t.Fatalf("the check's claim read %+v", mine)
	}
	now := t0.Add(time.Minute)
	mine.LastCheckedAt = &now
	if err := s.SaveDomainCheck(ctx, mine, nil); err != nil {
		t.Fatal(err)
	}
	if d := Try(s.Domain(ctx, acme.ID, "example.com")).Must(t); d.IPPool != "bulk" {
		t.Fatalf("after a check the pool is %q, want bulk", d.IPPool)
	}
	// Cleared, the domain sends from the default pool again.
	if d := Try(s.UpdateDomain(ctx, acme.ID, "example.com", mailroom.DomainUpdate{IPPool: new("")})).Must(t); d.IPPool != "" {
		t.Fatalf("cleared, the pool is %q", d.IPPool)
	}
	if d := Try(s.Domain(ctx, acme.ID, "example.com")).Must(t); d.IPPool != "" {
		t.Fatalf("cleared, read back the pool %q", d.IPPool)
	}
	_, err := s.UpdateDomain(ctx, acme.ID, "other.example", mailroom.DomainUpdate{IPPool: new("bulk")})
	wantCode(t, err, mailroom.ECodeNotFound)
	// A domain created with a pool keeps it.
	d := NewDomain(acme, "pooled.example", t0)
	d.IPPool = "transactional"
	if err := s.CreateDomain(ctx, d, mailroom.DefaultMaxDomains); err != nil {
		t.Fatal(err)
	}
	if got := Try(s.Domain(ctx, acme.ID, "pooled.example")).Must(t); got.IPPool != "transactional" {
		t.Fatalf("created with a pool, read back %q", got.IPPool)
	}
}

func testDomainClaims(t *testing.T, s mailroom.Store) {
	ctx := context.Background()
	acme := NewAccount(t, s, "acme")
	due, later := NewDomain(acme, "due.example", t0), NewDomain(acme, "later.example", t0.Add(time.Hour))
	never := NewDomain(acme, "never.example", t0)
	never.NextCheckAt = nil
	for _, d := range []*mailroom.Domain{due, later, never} {
		if err := s.CreateDomain(ctx, d, mailroom.DefaultMaxDomains); err != nil {
			t.Fatal(err)
		}
	}
	for i := range 20 {
		if err := s.CreateDomain(ctx, NewDomain(acme, string(rune('a'+i))+".many.example", t0), mailroom.DefaultMaxDomains); err != nil {
			t.Fatal(err)
		}
	}

	// Four claimers at once: every due domain is claimed exactly once.
	seen := map[string]int{}
	for _, d := range claimConcurrently(t, 4, func() ([]*mailroom.Domain, error) {
		return s.ClaimDueDomains(ctx, t0, time.Minute, 3)
	}) {
		seen[d.Name]++
	}
	if len(seen) != 21 || seen["later.example"] != 0 || seen["never.example"] != 0 {
		t.Fatalf("claimed %d distinct domains (%v), want the 21 due ones", len(seen), seen)
	}
	for name, n := range seen {
		if n != 1 {
			t.Fatalf("%s claimed %d times", name, n)
		}
	}
	// A lease that expired (its node died) makes the domain claimable again.
	got := Try(s.ClaimDueDomains(ctx, t0.Add(2*time.Minute), time.Minute, 100)).Must(t)
	if len(got) != 21 {
		t.Fatalf("after the leases expired, %d domains were claimable, want 21", len(got))
	}
	// Saving a check releases the lease.
	d := got[0]
	next := t0.Add(time.Minute)
	d.NextCheckAt = &next
	if err := s.SaveDomainCheck(ctx, d, nil); err != nil {
		t.Fatal(err)
	}
	again := Try(s.ClaimDueDomains(ctx, t0.Add(150*time.Second), time.Minute, 100)).Must(t)
	if len(again) != 1 || again[0].ID != d.ID {
		t.Fatalf("after saving, want only %s claimable under the others' leases, got %d", d.Name, len(again))
	}
}

func testEvents(t *testing.T, s mailroom.Store) {
	ctx := context.Background()
	acme, globex := NewAccount(t, s, "acme"), NewAccount(t, s, "globex")
	d := NewDomain(acme, "example.com", t0)
	if err := s.CreateDomain(ctx, d, mailroom.DefaultMaxDomains); err != nil {
		t.Fatal(err)
	}
	for i := range 5 {
		ev := Try(mailroom.NewEvent(acme.ID, "domain.verified", map[string]int{"n": i}, t0.Add(time.Duration(i)*time.Second))).Must(t)
		if err := s.SaveDomainCheck(ctx, d, ev); err != nil {
			t.Fatal(err)
		}
	}
	var all []*mailroom.Event
	cursor := ""
	for {
		page, next := Try2(s.ListEvents(ctx, acme.ID, mailroom.EventFilter{}, mailroom.Page{Limit: 2, Cursor: cursor})).Must(t)
		all = append(all, page...)
		if next == "" {
			break
		}
		cursor = next
	}
	if len(all) != 5 {
		t.Fatalf("got %d events, want 5", len(all))
	}
	var first struct{ N int }
	if err := json.Unmarshal(all[0].Data, &first); err != nil || first.N != 4 {
		t.Fatalf("newest first: got %s", all[0].Data)
	}
	if other, _ := Try2(s.ListEvents(ctx, globex.ID, mailroom.EventFilter{}, mailroom.Page{})).Must(t); len(other) != 0 {
		t.Fatalf("another account sees %d events", len(other))
	}
}

// claimConcurrently runs claim from n goroutines at once until it returns
// nothing, and returns everything claimed.
func claimConcurrently[T any](t *testing.T, n int, claim func() ([]T, error)) []T {
	var mu sync.Mutex
	var all []T
	var wg sync.WaitGroup
	for range n {
		wg.Go(func() {
			for {
				got, err := claim()
				if err != nil {
					t.Error(err)
					return
				}
				if len(got) == 0 {
					return
				}
				mu.Lock()
				all = append(all, got...)
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	return all
}
