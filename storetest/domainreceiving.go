package storetest

import (
	"context"
	"testing"
	"time"

	"github.com/mailroom/mailroom"
)

// A domain's receiving setting (docs/api.md "Receiving mail"): turning it
// on adds the MX of purpose receiving and brings the next check forward,
// off removes it; each change is audited as domain.updated with receiving,
// a change to what it is changes nothing; a check that ran meanwhile keeps
// the setting's record.

func init() {
	extraSuites = append(extraSuites, suite{"DomainReceivingSetting", testDomainReceivingSetting})
}

func testDomainReceivingSetting(t *testing.T, s mailroom.Store) {
	ctx := context.Background()
	acme := NewAccount(t, s, "acme")
	far := time.Now().Add(20 * time.Hour)
	d := NewDomain(acme, "in.example.com", far)
	d.Status = mailroom.DomainVerified
	mustDo(t, s.CreateDomain(ctx, d, mailroom.DefaultMaxDomains))
	rec := mailroom.ReceivingRecord(d.Name, mailroom.DefaultRecordSettings("mx.mailroom.test"))
	on, off := true, false

	got := Try(s.UpdateDomain(ctx, acme.ID, d.Name, mailroom.DomainUpdate{Receiving: &on, ReceivingRecord: &rec})).Must(t)
	read := Try(s.Domain(ctx, acme.ID, d.Name)).Must(t)
	for _, x := range []*mailroom.Domain{got, read} {
		if !x.Receiving || len(x.Records) != 2 || x.Records[1].Purpose != mailroom.PurposeReceiving || x.Records[1].Value != "mx.mailroom.test" {
			t.Fatalf("turned on: receiving %v records %+v", x.Receiving, x.Records)
		}
		if x.NextCheckAt == nil || !x.NextCheckAt.Before(time.Now().Add(2*time.Minute)) {
			t.Fatalf("turned on, next check at %v, want within a minute", x.NextCheckAt)
		}
	}
	// Again: nothing changes, nothing is audited.
	Try(s.UpdateDomain(ctx, acme.ID, d.Name, mailroom.DomainUpdate{Receiving: &on, ReceivingRecord: &rec})).Must(t)
	updates := auditEntries(t, s, acme, mailroom.AuditFilter{Action: mailroom.AuditDomainUpdated})
	if len(updates) != 1 || changesJSON(t, updates[0].Changes) != `{"receiving":[false,true]}` {
		t.Fatalf("audit after turning on twice: %d entries, first %v", len(updates), updates)
	}

	// A check that began before receiving was turned on keeps the
	// record; the MX it found verified makes the domain receive.
	checked := Try(s.Domain(ctx, acme.ID, d.Name)).Must(t)
	checked.Records[1].Status = mailroom.RecordVerified
	mustDo(t, s.SaveDomainCheck(ctx, checked, nil))
	if got := Try(s.ReceivingDomains(ctx, d.Name)).Must(t); len(got) != 1 || got[0].AccountID != acme.ID {
		t.Fatalf("verified receiving MX: receiving domains %+v", got)
	}
	stale := *checked
	stale.Records = stale.Records[:1]
	mustDo(t, s.SaveDomainCheck(ctx, &stale, nil))
	if got := Try(s.Domain(ctx, acme.ID, d.Name)).Must(t); len(got.Records) != 2 || !got.Receiving {
		t.Fatalf("a check without the record dropped it: %+v", got.Records)
	}

	got = Try(s.UpdateDomain(ctx, acme.ID, d.Name, mailroom.DomainUpdate{Receiving: &off})).Must(t)
	if got.Receiving || len(got.Records) != 1 {
		t.Fatalf("turned off: receiving %v records %+v", got.Receiving, got.Records)
	}
	if got := Try(s.ReceivingDomains(ctx, d.Name)).Must(t); len(got) != 0 {
		t.Fatalf("turned off, still receiving: %+v", got)
	}
	// A check that began while it was on does not bring the record back.
	mustDo(t, s.SaveDomainCheck(ctx, checked, nil))
	if got := Try(s.Domain(ctx, acme.ID, d.Name)).Must(t); len(got.Records) != 1 || got.Receiving {
		t.Fatalf("a check from before turning off brought the record back: %+v", got.Records)
	}
	updates = auditEntries(t, s, acme, mailroom.AuditFilter{Action: mailroom.AuditDomainUpdated})
	if len(updates) != 2 || changesJSON(t, updates[1].Changes) != `{"receiving":[true,false]}` {
		t.Fatalf("audit after turning off: %v", updates)
	}
}
