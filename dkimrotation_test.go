package mailroom

import (
	"testing"
	"time"
)

func rotationDomain(t *testing.T, now time.Time) *Domain {
	t.Helper()
	sel, _, pub, err := NewDKIMKey(now)
	if err != nil {
		t.Fatal(err)
	}
	d := &Domain{Name: "shop.example", Status: DomainVerified, DKIMSelector: sel, DKIMPublicKey: pub,
		DKIMPrivateKeySealed: []byte("old"), CreatedAt: now}
	d.Records = BuildDomainRecords(d, DefaultRecordSettings("mail.operator.test"))
	for i := range d.Records {
		d.Records[i].Status = RecordVerified
	}
	return d
}

// checked is what a check finds: every record as d has it, and the
// records at names found verified, those at names missing failed.
func checked(d *Domain, found, missing []string) []DNSRecord {
	out := append([]DNSRecord(nil), d.Records...)
	for i := range out {
		for _, n := range found {
			if out[i].Name == n {
				out[i].Status = RecordVerified
			}
		}
		for _, n := range missing {
			if out[i].Name == n {
				out[i].Status = RecordFailed
			}
		}
	}
	return out
}

func TestDKIMRotationMovesWhenTheNewRecordVerifies(t *testing.T) {
	start := time.Date(2026, 11, 29, 9, 0, 0, 0, time.UTC)
	d := rotationDomain(t, start)
	oldSel := d.DKIMSelector
	sel, _, pub, err := NewDKIMKey(start.Add(time.Minute))
	if err != nil || sel == oldSel {
		t.Fatalf("new key: %q %v", sel, err)
	}
	if err := RotateDKIM(d, DomainDKIMKey{Selector: sel, PublicKey: pub, PrivateKeySealed: []byte("new")}); err != nil {
		t.Fatal(err)
	}
	newName := sel + "._domainkey.shop.example"
	if err := RotateDKIM(d, DomainDKIMKey{Selector: "mr9999000000"}); !IsCode(err, ECodeInvalidState) {
		t.Fatalf("second rotation: %v, want invalid_state", err)
	}

	// Not published yet: the domain stays verified, the old key signs.
	at := start.Add(time.Hour)
	if ev := ApplyDomainCheck(d, checked(d, nil, []string{newName}), false, at); ev != "" || d.Status != DomainVerified {
		t.Fatalf("a missing pending record changed the domain: %q %s", ev, d.Status)
	}
	if d.DKIMSelector != oldSel || d.DKIMKeyOf(DKIMKeyPending) == nil {
		t.Fatalf("signing moved before the record was found: %s", d.DKIMSelector)
	}

	// Published: signing moves, the old record may go 7 days later.
	moved := start.Add(26 * time.Hour)
	ApplyDomainCheck(d, checked(d, []string{newName}, nil), false, moved)
	if d.DKIMSelector != sel || string(d.DKIMPrivateKeySealed) != "new" || d.DKIMKeyOf(DKIMKeyPending) != nil {
		t.Fatalf("signing did not move: active %s, keys %+v", d.DKIMSelector, d.DKIMKeys)
	}
	var oldRec, newRec *DNSRecord
	for i, r := range d.Records {
		switch r.Name {
		case oldSel + "._domainkey.shop.example":
			oldRec = &d.Records[i]
		case newName:
			newRec = &d.Records[i]
		}
	}
	if oldRec == nil || oldRec.Required || oldRec.RemovableAfter == nil || !oldRec.RemovableAfter.Equal(moved.Add(7*24*time.Hour)) {
		t.Fatalf("old record: %+v", oldRec)
	}
	if newRec == nil || !newRec.Required || d.Records[0].Name != newName {
		t.Fatalf("new record is not the first, required one: %+v", d.Records)
	}
	if d.DKIMKeyOf(DKIMKeyRetired).PrivateKeySealed != nil {
		t.Fatal("the retired key keeps its private key")
	}
	// Checked again: nothing moves twice.
	ApplyDomainCheck(d, checked(d, nil, nil), false, moved.Add(time.Hour))
	if d.DKIMSelector != sel || !oldRec.RemovableAfter.Equal(moved.Add(7*24*time.Hour)) {
		t.Fatal("a second check moved the key again")
	}

	// The old record, deleted early, does not fail the domain.
	ApplyDomainCheck(d, checked(d, nil, []string{oldSel + "._domainkey.shop.example"}), false, moved.Add(2*24*time.Hour))
	if d.Status != DomainVerified {
		t.Fatalf("deleting the old record made the domain %s", d.Status)
	}
	// Forgotten at the first check from removableAfter on.
	ApplyDomainCheck(d, checked(d, nil, nil), false, moved.Add(7*24*time.Hour-time.Second))
	if d.DKIMKeyOf(DKIMKeyRetired) == nil {
		t.Fatal("the old key was forgotten before removableAfter")
	}
	ApplyDomainCheck(d, checked(d, nil, nil), false, moved.Add(7*24*time.Hour))
	if d.DKIMKeyOf(DKIMKeyRetired) != nil || len(d.Records) != 4 {
		t.Fatalf("the old key is kept after removableAfter: %+v", d.Records)
	}
}

func TestDKIMEd25519IsNotRequired(t *testing.T) {
	now := time.Date(2026, 11, 29, 9, 0, 0, 0, time.UTC)
	d := rotationDomain(t, now)
	sel, _, pub, err := NewDKIMEd25519Key(now)
	if err != nil {
		t.Fatal(err)
	}
	if !SetDKIMEd25519(d, true, DomainDKIMKey{Selector: sel, PublicKey: pub}) || SetDKIMEd25519(d, true, DomainDKIMKey{Selector: "other"}) {
		t.Fatal("adding twice changed the domain twice")
	}
	name := sel + "._domainkey.shop.example"
	if d.SigningEd25519Key() != nil {
		t.Fatal("an unverified Ed25519 key signs")
	}
	ApplyDomainCheck(d, checked(d, nil, []string{name}), false, now)
	if d.Status != DomainVerified || d.SigningEd25519Key() != nil {
		t.Fatalf("missing Ed25519 record: %s, signing %v", d.Status, d.SigningEd25519Key())
	}
	ApplyDomainCheck(d, checked(d, []string{name}, nil), false, now)
	if k := d.SigningEd25519Key(); k == nil || k.Selector != sel {
		t.Fatal("a verified Ed25519 key does not sign")
	}
	for _, r := range d.Records {
		if r.Name == name && (r.Required || r.Value != "v=DKIM1; k=ed25519; p="+pub) {
			t.Fatalf("Ed25519 record: %+v", r)
		}
	}
	if !SetDKIMEd25519(d, false, DomainDKIMKey{}) || d.DKIMKeyOf(DKIMKeyEd25519) != nil || len(d.Records) != 4 {
		t.Fatalf("removing: %+v", d.Records)
	}
}
