package storetest

import (
	"context"
	"reflect"
	"testing"
	"time"

	"github.com/mailroom/mailroom"
)

func init() {
	extraSuites = append(extraSuites, suite{"DomainHealthChecks", testDomainHealthChecks})
}

// A domain's health checks (docs/api.md "Domain health") are empty until a
// check saves them, then read back in order, with their details, by every
// reading of the domain (by name, by id, listed, claimed for a re-check),
// and replaced by the next check; a setting change keeps them.
func testDomainHealthChecks(t *testing.T, s mailroom.Store) {
	ctx := context.Background()
	acme := NewAccount(t, s, "acme")
	d := NewDomain(acme, "example.com", t0)
	if err := s.CreateDomain(ctx, d, mailroom.DefaultMaxDomains); err != nil {
		t.Fatal(err)
	}
	if got := Try(s.Domain(ctx, acme.ID, "example.com")).Must(t); got.Checks == nil || len(got.Checks) != 0 {
		t.Fatalf("a new domain has checks %#v, want an empty list", got.Checks)
	}

	checks := []mailroom.HealthCheck{
		{Name: mailroom.HealthDMARC, Status: mailroom.HealthWarn, Detail: `No DMARC record at _dmarc.example.com; add TXT "v=DMARC1; p=none;" — "quoted" ✓`},
		{Name: mailroom.HealthSPFCoversSending, Status: mailroom.HealthFail, Detail: "192.0.2.7 is not allowed"},
		{Name: mailroom.HealthDNSBL, Status: mailroom.HealthPass, Detail: ""},
	}
	now := t0.Add(time.Hour)
	d.Checks, d.LastCheckedAt = checks, &now
	if err := s.SaveDomainCheck(ctx, d, nil); err != nil {
		t.Fatal(err)
	}
	read := map[string]func() *mailroom.Domain{
		"by name": func() *mailroom.Domain { return Try(s.Domain(ctx, acme.ID, "example.com")).Must(t) },
		"by id":   func() *mailroom.Domain { return Try(s.DomainByID(ctx, acme.ID, d.ID)).Must(t) },
		"listed": func() *mailroom.Domain {
			l, _ := Try2(s.ListDomains(ctx, acme.ID, mailroom.Page{})).Must(t)
			return l[0]
		},
		"claimed": func() *mailroom.Domain {
			l := Try(s.ClaimDueDomains(ctx, t0.Add(48*time.Hour), time.Minute, 10)).Must(t)
			if len(l) != 1 {
				t.Fatalf("claimed %d domains", len(l))
			}
			return l[0]
		},
		"updated": func() *mailroom.Domain {
			return Try(s.UpdateDomain(ctx, acme.ID, "example.com", mailroom.DomainUpdate{IPPool: new("bulk")})).Must(t)
		},
	}
	for how, get := range read {
		if got := get(); !reflect.DeepEqual(got.Checks, checks) {
			t.Errorf("read %s: checks %#v, want %#v", how, got.Checks, checks)
		}
	}

	// The next check replaces them all.
	next := []mailroom.HealthCheck{{Name: mailroom.HealthDMARC, Status: mailroom.HealthPass, Detail: "p=reject"}}
	d.Checks = next
	if err := s.SaveDomainCheck(ctx, d, nil); err != nil {
		t.Fatal(err)
	}
	if got := Try(s.Domain(ctx, acme.ID, "example.com")).Must(t); !reflect.DeepEqual(got.Checks, next) {
		t.Fatalf("after the next check: %#v, want %#v", got.Checks, next)
	}
}
