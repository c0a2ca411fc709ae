package mailroom_test

import (
	"testing"
	"time"

	"github.com/mailroom/mailroom"
)

// withReceiving is records plus a receiving MX of status mx.
func withReceiving(rs []mailroom.DNSRecord, mx mailroom.RecordStatus) []mailroom.DNSRecord {
	rec := mailroom.ReceivingRecord("in.example.com", mailroom.DefaultRecordSettings("mx.mailroom.test"))
	rec.Status = mx
	return append(rs, rec)
}

// The receiving MX is required to receive, not to send: a verified domain
// whose receiving MX is missing keeps sending, and a pending domain whose
// sending records are found becomes verified without it.
func TestReceivingRecordLeavesTheDomainStatusAlone(t *testing.T) {
	d := &mailroom.Domain{Status: mailroom.DomainVerified, CreatedAt: created, VerifiedAt: at(time.Minute), Receiving: true}
	if ev := mailroom.ApplyDomainCheck(d, withReceiving(records(V, V, V, V), F), false, created.Add(time.Hour)); ev != "" || d.Status != mailroom.DomainVerified {
		t.Fatalf("a missing receiving MX moved a verified domain to %s (%q)", d.Status, ev)
	}
	p := &mailroom.Domain{Status: mailroom.DomainPending, CreatedAt: created, Receiving: true}
	if ev := mailroom.ApplyDomainCheck(p, withReceiving(records(V, V, V, P), F), false, created.Add(time.Minute)); ev != mailroom.EventDomainVerified {
		t.Fatalf("a pending domain with its sending records found is %s (%q)", p.Status, ev)
	}
	// Re-checked soon while its receiving MX is not verified, then at
	// the verified pace once it is.
	now := created.Add(2 * time.Hour)
	mailroom.ApplyDomainCheck(d, withReceiving(records(V, V, V, V), P), false, now)
	if d.NextCheckAt == nil || d.NextCheckAt.After(now.Add(15*time.Minute)) {
		t.Fatalf("next check %v, want within 15 minutes while the receiving MX is pending", d.NextCheckAt)
	}
	mailroom.ApplyDomainCheck(d, withReceiving(records(V, V, V, V), V), false, now)
	if d.NextCheckAt == nil || d.NextCheckAt.Before(now.Add(time.Hour)) {
		t.Fatalf("next check %v, want the verified pace once the MX is verified", d.NextCheckAt)
	}
}

func TestReceivesMail(t *testing.T) {
	for _, tc := range []struct {
		name      string
		receiving bool
		status    mailroom.DomainStatus
		mx        mailroom.RecordStatus
		want      bool
	}{
		{"verified, MX verified", true, mailroom.DomainVerified, V, true},
		{"in its grace period", true, mailroom.DomainTemporaryFailure, V, true},
		{"MX pending", true, mailroom.DomainVerified, P, false},
		{"MX failed", true, mailroom.DomainVerified, F, false},
		{"domain pending", true, mailroom.DomainPending, V, false},
		{"domain failed", true, mailroom.DomainFailed, V, false},
		{"receiving off", false, mailroom.DomainVerified, V, false},
	} {
		d := &mailroom.Domain{Receiving: tc.receiving, Status: tc.status, Records: withReceiving(records(V, V, V, V), tc.mx)}
		if got := d.ReceivesMail(); got != tc.want {
			t.Errorf("%s: ReceivesMail %v, want %v", tc.name, got, tc.want)
		}
	}
	if (&mailroom.Domain{Receiving: true, Status: mailroom.DomainVerified, Records: records(V, V, V, V)}).ReceivesMail() {
		t.Error("a domain without its receiving MX receives mail")
	}
}

func TestSetReceiving(t *testing.T) {
	s := mailroom.DefaultRecordSettings("MX.Mailroom.test.")
	rec := mailroom.ReceivingRecord("in.example.com", s)
	if rec.Type != "MX" || rec.Name != "in.example.com" || rec.Value != "mx.mailroom.test" || rec.Priority == nil || *rec.Priority != 10 ||
		!rec.Required || rec.Status != P || rec.Purpose != mailroom.PurposeReceiving {
		t.Fatalf("receiving record %+v", rec)
	}
	now := created.Add(48 * time.Hour)
	next := now.Add(20 * time.Hour)
	d := &mailroom.Domain{Status: mailroom.DomainVerified, Records: records(V, V, V, V), NextCheckAt: &next}
	if !mailroom.SetReceiving(d, true, rec, now) || !d.Receiving || len(d.Records) != 5 || d.Records[4].Purpose != mailroom.PurposeReceiving {
		t.Fatalf("turned on: %+v", d)
	}
	if !d.NextCheckAt.Equal(now.Add(time.Minute)) {
		t.Fatalf("turned on, next check at %v, want a minute on", d.NextCheckAt)
	}
	if mailroom.SetReceiving(d, true, rec, now) || len(d.Records) != 5 {
		t.Fatalf("turned on twice changed it: %+v", d.Records)
	}
	if !mailroom.SetReceiving(d, false, mailroom.DNSRecord{}, now) || d.Receiving || len(d.Records) != 4 {
		t.Fatalf("turned off: %+v", d)
	}
	// A failed domain is checked only when asked: turning receiving on
	// schedules nothing.
	f := &mailroom.Domain{Status: mailroom.DomainFailed, Records: records(F, F, F, F)}
	mailroom.SetReceiving(f, true, rec, now)
	if f.NextCheckAt != nil {
		t.Fatalf("a failed domain got a check at %v", f.NextCheckAt)
	}
}

// A check that ran while receiving was turned on or off saves records
// that agree with the flag as it is now.
func TestSettleReceivingRecord(t *testing.T) {
	rec := mailroom.ReceivingRecord("in.example.com", mailroom.DefaultRecordSettings("mx.mailroom.test"))
	stored := withReceiving(records(V, V, V, V), P)
	d := &mailroom.Domain{Records: records(V, V, V, V)} // the check began before receiving was on
	mailroom.SettleReceivingRecord(d, true, stored)
	if !d.Receiving || len(d.Records) != 5 || d.Records[4].Purpose != rec.Purpose {
		t.Fatalf("turned on meanwhile: %+v", d.Records)
	}
	checked := withReceiving(records(V, V, V, V), V)
	d = &mailroom.Domain{Records: checked}
	mailroom.SettleReceivingRecord(d, true, stored)
	if len(d.Records) != 5 || d.Records[4].Status != V {
		t.Fatalf("the check's own verdict on the MX was replaced: %+v", d.Records)
	}
	d = &mailroom.Domain{Records: withReceiving(records(V, V, V, V), V)}
	mailroom.SettleReceivingRecord(d, false, records(V, V, V, V))
	if d.Receiving || len(d.Records) != 4 {
		t.Fatalf("turned off meanwhile: %+v", d.Records)
	}
}
