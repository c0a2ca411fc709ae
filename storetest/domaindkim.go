package storetest

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/mailroom/mailroom"
)

func init() {
	extraSuites = append(extraSuites, suite{"DomainDKIMKeys", testDomainDKIMKeys})
}

// newDKIMDomain is NewDomain with the active key's record, as
// BuildDomainRecords makes it, verified.
func newDKIMDomain(acct *mailroom.Account, name string) *mailroom.Domain {
	d := NewDomain(acct, name, t0)
	d.Status = mailroom.DomainVerified
	d.Records = append([]mailroom.DNSRecord{{
		Purpose: mailroom.PurposeDKIM, Type: "TXT", Name: d.DKIMSelector + "._domainkey." + name,
		Value: mailroom.DKIMRecordValue(d.DKIMPublicKey), Required: true, Status: mailroom.RecordVerified,
	}}, d.Records...)
	d.Records[1].Status = mailroom.RecordVerified
	return d
}

func dkimRecord(d *mailroom.Domain, selector string) *mailroom.DNSRecord {
	for i, r := range d.Records {
		if r.Purpose == mailroom.PurposeDKIM && r.Name == selector+"._domainkey."+d.Name {
			return &d.Records[i]
		}
	}
	return nil
}

// A rotation stores the pending key (sealed bytes as given) with its
// record in one transaction, refuses a second one, survives a check that
// was running meanwhile, and moves signing when a check finds its record;
// the Ed25519 key is stored and removed by UpdateDomain.
func testDomainDKIMKeys(t *testing.T, s mailroom.Store) {
	ctx := context.Background()
	acme := NewAccount(t, s, "acme")
	d := newDKIMDomain(acme, "example.com")
	if err := s.CreateDomain(ctx, d, mailroom.DefaultMaxDomains); err != nil {
		t.Fatal(err)
	}
	// A check starts before the rotation and saves after it.
	stale := Try(s.Domain(ctx, acme.ID, "example.com")).Must(t)

	next := mailroom.DomainDKIMKey{Selector: "mr2612fedcba", PublicKey: "MIIC", PrivateKeySealed: []byte{9, 8, 7}, CreatedAt: t0}
	// Two rotations at once: exactly one is stored.
	var wg sync.WaitGroup
	errs := make([]error, 2)
	for i := range errs {
		wg.Go(func() {
			k := next
			if i == 1 {
				k.Selector = "mr2612aaaaaa"
			}
			_, errs[i] = s.RotateDomainDKIM(ctx, acme.ID, "example.com", k)
		})
	}
	wg.Wait()
	if (errs[0] == nil) == (errs[1] == nil) {
		t.Fatalf("two rotations at once: %v, %v; want one stored and one invalid_state", errs[0], errs[1])
	}
	for _, err := range errs {
		if err != nil {
			wantCode(t, err, mailroom.ECodeInvalidState)
		}
	}
	got := Try(s.Domain(ctx, acme.ID, "example.com")).Must(t)
	p := got.DKIMKeyOf(mailroom.DKIMKeyPending)
	if p == nil || len(got.DKIMKeys) != 1 || got.DKIMSelector != d.DKIMSelector {
		t.Fatalf("after the rotation: active %s, keys %+v", got.DKIMSelector, got.DKIMKeys)
	}
	if errs[1] != nil && (p.Selector != next.Selector || string(p.PrivateKeySealed) != "\x09\x08\x07" || p.PublicKey != "MIIC") {
		t.Fatalf("pending key stored as %+v", p)
	}
	rec := dkimRecord(got, p.Selector)
	if rec == nil || rec.Status != mailroom.RecordPending || rec.Required || rec.Value != mailroom.DKIMRecordValue(p.PublicKey) {
		t.Fatalf("pending record: %+v", rec)
	}
	if got.Status != mailroom.DomainVerified {
		t.Fatalf("the domain is %s during the rotation", got.Status)
	}
	_, err := s.RotateDomainDKIM(ctx, acme.ID, "other.com", next)
	wantCode(t, err, mailroom.ECodeNotFound)

	// The stale check saves: the pending key and its record stay.
	now := t0.Add(time.Hour)
	mailroom.ApplyDomainCheck(stale, stale.Records, false, now)
	if err := s.SaveDomainCheck(ctx, stale, nil); err != nil {
		t.Fatal(err)
	}
	got = Try(s.Domain(ctx, acme.ID, "example.com")).Must(t)
	if got.DKIMKeyOf(mailroom.DKIMKeyPending) == nil || dkimRecord(got, p.Selector) == nil {
		t.Fatalf("a check running during the rotation lost it: keys %+v", got.DKIMKeys)
	}

	// A check finds the new record: signing moves to the new key.
	pending := *got.DKIMKeyOf(mailroom.DKIMKeyPending)
	later := now.Add(time.Hour)
	records := append([]mailroom.DNSRecord(nil), got.Records...)
	dkimRecord(&mailroom.Domain{Name: got.Name, Records: records}, pending.Selector).Status = mailroom.RecordVerified
	mailroom.ApplyDomainCheck(got, records, false, later)
	if err := s.SaveDomainCheck(ctx, got, nil); err != nil {
		t.Fatal(err)
	}
	got = Try(s.Domain(ctx, acme.ID, "example.com")).Must(t)
	if got.DKIMSelector != pending.Selector || string(got.DKIMPrivateKeySealed) != string(pending.PrivateKeySealed) {
		t.Fatalf("signing did not move: active %s", got.DKIMSelector)
	}
	old := got.DKIMKeyOf(mailroom.DKIMKeyRetired)
	if old == nil || old.Selector != d.DKIMSelector || old.RemovableAfter == nil || !old.RemovableAfter.Equal(later.Add(7*24*time.Hour)) {
		t.Fatalf("retired key: %+v", old)
	}
	if r := dkimRecord(got, d.DKIMSelector); r == nil || r.RemovableAfter == nil || r.Required {
		t.Fatalf("old record: %+v", r)
	}
	if r := dkimRecord(got, pending.Selector); r == nil || !r.Required || r.Status != mailroom.RecordVerified {
		t.Fatalf("new record: %+v", r)
	}

	// Ed25519: added with its record, kept when asked again, removed.
	on, off := true, false
	ed := &mailroom.DomainDKIMKey{Selector: "ed2611abcdef", PublicKey: "11qYAYKxCrfVS/7TyWQHOg7hcvPapiMlrwIaaPcHURo=", PrivateKeySealed: []byte{4}, CreatedAt: t0}
	got = Try(s.UpdateDomain(ctx, acme.ID, "example.com", mailroom.DomainUpdate{DKIMEd25519: &on, Ed25519Key: ed})).Must(t)
	again := Try(s.UpdateDomain(ctx, acme.ID, "example.com", mailroom.DomainUpdate{DKIMEd25519: &on})).Must(t)
	for _, x := range []*mailroom.Domain{got, again, Try(s.Domain(ctx, acme.ID, "example.com")).Must(t)} {
		k := x.DKIMKeyOf(mailroom.DKIMKeyEd25519)
		if k == nil || k.Selector != ed.Selector || string(k.PrivateKeySealed) != "\x04" {
			t.Fatalf("Ed25519 key: %+v", x.DKIMKeys)
		}
		if r := dkimRecord(x, ed.Selector); r == nil || r.Required || r.Value != mailroom.DKIMEd25519RecordValue(ed.PublicKey) {
			t.Fatalf("Ed25519 record: %+v", r)
		}
	}
	got = Try(s.UpdateDomain(ctx, acme.ID, "example.com", mailroom.DomainUpdate{DKIMEd25519: &off})).Must(t)
	if got.DKIMKeyOf(mailroom.DKIMKeyEd25519) != nil || dkimRecord(got, ed.Selector) != nil || got.DKIMKeyOf(mailroom.DKIMKeyRetired) == nil {
		t.Fatalf("after removing Ed25519: keys %+v", got.DKIMKeys)
	}
}
