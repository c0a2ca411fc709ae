package mailroom_test

import (
	"testing"
	"time"

	"github.com/mailroom/mailroom"
)

var created = time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)

const (
	V = mailroom.RecordVerified
	F = mailroom.RecordFailed
	P = mailroom.RecordPending
)

// records are a domain's DKIM, SPF, return-path (required) and DMARC
// (recommended) records with the given statuses.
func records(dkim, spf, mx, dmarc mailroom.RecordStatus) []mailroom.DNSRecord {
	return []mailroom.DNSRecord{
		{Purpose: mailroom.PurposeDKIM, Required: true, Status: dkim},
		{Purpose: mailroom.PurposeSPF, Required: true, Status: spf},
		{Purpose: mailroom.PurposeReturnPath, Required: true, Status: mx},
		{Purpose: mailroom.PurposeDMARC, Required: false, Status: dmarc},
	}
}

func at(d time.Duration) *time.Time { t := created.Add(d); return &t }

func TestApplyDomainCheckTransitions(t *testing.T) {
	h := time.Hour
	verifiedAt := at(10 * time.Minute)
	for _, tc := range []struct {
		name          string
		status        mailroom.DomainStatus
		failingSince  *time.Time
		records       []mailroom.DNSRecord
		indeterminate bool
		now           time.Duration // since creation

		want             mailroom.DomainStatus
		event            string
		next             *time.Time // nil: no automatic check
		wantVerifiedAt   *time.Time
		wantFailingSince *time.Time
	}{
		{name: "pending, all required found", status: mailroom.DomainPending,
			records: records(V, V, V, P), now: 5 * time.Minute,
			want: mailroom.DomainVerified, event: mailroom.EventDomainVerified,
			next: at(5*time.Minute + 24*h), wantVerifiedAt: at(5 * time.Minute)},
		{name: "pending, one missing", status: mailroom.DomainPending,
			records: records(V, F, V, V), now: h,
			want: mailroom.DomainPending, next: at(108 * time.Minute)},
		{name: "pending, no required record at all", status: mailroom.DomainPending,
			records: nil, now: h,
			want: mailroom.DomainPending, next: at(108 * time.Minute)},
		{name: "pending, last check before the deadline", status: mailroom.DomainPending,
			records: records(P, P, P, P), now: 71*h + 48*time.Minute,
			want: mailroom.DomainPending, next: at(72 * h)},
		{name: "pending, not verified in 72h", status: mailroom.DomainPending,
			records: records(V, V, F, P), now: 72 * h,
			want: mailroom.DomainFailed, event: mailroom.EventDomainFailed},
		{name: "pending, DNS down at the deadline", status: mailroom.DomainPending,
			records: records(P, P, P, P), indeterminate: true, now: 72 * h,
			want: mailroom.DomainFailed, event: mailroom.EventDomainFailed},
		{name: "pending, verified at the last moment", status: mailroom.DomainPending,
			records: records(V, V, V, P), now: 72 * h,
			want: mailroom.DomainVerified, event: mailroom.EventDomainVerified,
			next: at(96 * h), wantVerifiedAt: at(72 * h)},
		{name: "pending, DNS down, checked again soon", status: mailroom.DomainPending,
			records: records(P, P, P, P), indeterminate: true, now: 10 * h,
			want: mailroom.DomainPending, next: at(10*h + 15*time.Minute)},

		{name: "verified, still fine", status: mailroom.DomainVerified,
			records: records(V, V, V, V), now: 30 * h,
			want: mailroom.DomainVerified, next: at(54 * h), wantVerifiedAt: verifiedAt},
		{name: "verified, DMARC gone", status: mailroom.DomainVerified,
			records: records(V, V, V, P), now: 30 * h,
			want: mailroom.DomainVerified, next: at(54 * h), wantVerifiedAt: verifiedAt},
		{name: "verified, DKIM record gone", status: mailroom.DomainVerified,
			records: records(F, V, V, V), now: 30 * h,
			want: mailroom.DomainTemporaryFailure, event: mailroom.EventDomainTemporaryFailure,
			next: at(30*h + 15*time.Minute), wantVerifiedAt: verifiedAt, wantFailingSince: at(30 * h)},
		{name: "verified, DNS timed out", status: mailroom.DomainVerified,
			records: records(V, V, V, V), indeterminate: true, now: 30 * h,
			want: mailroom.DomainVerified, next: at(30*h + 15*time.Minute), wantVerifiedAt: verifiedAt},

		{name: "temporary failure, fixed", status: mailroom.DomainTemporaryFailure, failingSince: at(30 * h),
			records: records(V, V, V, P), now: 40 * h,
			want: mailroom.DomainVerified, event: mailroom.EventDomainVerified,
			next: at(64 * h), wantVerifiedAt: at(40 * h)},
		{name: "temporary failure, still failing", status: mailroom.DomainTemporaryFailure, failingSince: at(30 * h),
			records: records(F, V, V, V), now: 40 * h,
			want: mailroom.DomainTemporaryFailure, next: at(40*h + 15*time.Minute),
			wantVerifiedAt: verifiedAt, wantFailingSince: at(30 * h)},
		{name: "temporary failure, last check before the grace ends", status: mailroom.DomainTemporaryFailure, failingSince: at(30 * h),
			records: records(F, V, V, V), now: 101*h + 50*time.Minute,
			want: mailroom.DomainTemporaryFailure, next: at(102 * h),
			wantVerifiedAt: verifiedAt, wantFailingSince: at(30 * h)},
		{name: "temporary failure, 72h passed", status: mailroom.DomainTemporaryFailure, failingSince: at(30 * h),
			records: records(F, F, V, V), now: 102 * h,
			want: mailroom.DomainFailed, event: mailroom.EventDomainFailed,
			wantVerifiedAt: verifiedAt, wantFailingSince: at(30 * h)},
		{name: "temporary failure, DNS down when 72h passed", status: mailroom.DomainTemporaryFailure, failingSince: at(30 * h),
			records: records(F, V, V, V), indeterminate: true, now: 102 * h,
			want: mailroom.DomainFailed, event: mailroom.EventDomainFailed,
			wantVerifiedAt: verifiedAt, wantFailingSince: at(30 * h)},

		{name: "failed, checked by hand, still missing", status: mailroom.DomainFailed,
			records: records(F, V, V, V), now: 100 * h,
			want: mailroom.DomainFailed, wantVerifiedAt: verifiedAt},
		{name: "failed, checked by hand, fixed", status: mailroom.DomainFailed, failingSince: at(20 * h),
			records: records(V, V, V, P), now: 100 * h,
			want: mailroom.DomainVerified, event: mailroom.EventDomainVerified,
			next: at(124 * h), wantVerifiedAt: at(100 * h)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := &mailroom.Domain{Status: tc.status, CreatedAt: created, FailingSince: tc.failingSince}
			if tc.status != mailroom.DomainPending {
				d.VerifiedAt = verifiedAt
			}
			now := created.Add(tc.now)
			event := mailroom.ApplyDomainCheck(d, tc.records, tc.indeterminate, now)
			if d.Status != tc.want || event != tc.event {
				t.Errorf("status %s, event %q; want %s, %q", d.Status, event, tc.want, tc.event)
			}
			wantTime(t, "NextCheckAt", d.NextCheckAt, tc.next)
			wantTime(t, "LastCheckedAt", d.LastCheckedAt, &now)
			wantTime(t, "VerifiedAt", d.VerifiedAt, tc.wantVerifiedAt)
			wantTime(t, "FailingSince", d.FailingSince, tc.wantFailingSince)
			if len(d.Records) != len(tc.records) {
				t.Errorf("records not stored on the domain")
			}
		})
	}
}

func wantTime(t *testing.T, field string, got, want *time.Time) {
	t.Helper()
	switch {
	case got == nil && want == nil:
	case got == nil || want == nil || !got.Equal(*want):
		t.Errorf("%s = %s, want %s", field, fmtTime(got), fmtTime(want))
	}
}

func fmtTime(t *time.Time) string {
	if t == nil {
		return "nil"
	}
	return "created+" + t.Sub(created).String()
}

func TestNextDomainCheckSchedule(t *testing.T) {
	m, h := time.Minute, time.Hour
	for _, tc := range []struct {
		status       mailroom.DomainStatus
		failingSince *time.Time
		now, want    time.Duration
	}{
		// Pending: 1m, 3m, 8m, 18m, 48m, 1h48m after creation, then every 2h.
		{mailroom.DomainPending, nil, 0, 1 * m},
		{mailroom.DomainPending, nil, 30 * time.Second, 1 * m},
		{mailroom.DomainPending, nil, 1 * m, 3 * m},
		{mailroom.DomainPending, nil, 3 * m, 8 * m},
		{mailroom.DomainPending, nil, 8 * m, 18 * m},
		{mailroom.DomainPending, nil, 18 * m, 48 * m},
		{mailroom.DomainPending, nil, 48 * m, 108 * m},
		{mailroom.DomainPending, nil, 108 * m, 228 * m},
		{mailroom.DomainPending, nil, 3 * h, 228 * m},
		{mailroom.DomainPending, nil, 228 * m, 348 * m},
		{mailroom.DomainPending, nil, 71 * h, 71*h + 48*m},
		{mailroom.DomainPending, nil, 71*h + 48*m, 72 * h},
		{mailroom.DomainPending, nil, 80 * h, 80 * h}, // overdue: now
		// Temporary failure: every 15 minutes, and at the end of the grace.
		{mailroom.DomainTemporaryFailure, at(10 * h), 20 * h, 20*h + 15*m},
		{mailroom.DomainTemporaryFailure, at(10 * h), 81*h + 55*m, 82 * h},
		// Verified: daily.
		{mailroom.DomainVerified, nil, 20 * h, 44 * h},
	} {
		d := &mailroom.Domain{Status: tc.status, CreatedAt: created, FailingSince: tc.failingSince}
		got := mailroom.NextDomainCheck(d, created.Add(tc.now))
		if got == nil || !got.Equal(created.Add(tc.want)) {
			t.Errorf("%s at created+%s: next check %s, want created+%s", tc.status, tc.now, fmtTime(got), tc.want)
		}
	}
	if got := mailroom.NextDomainCheck(&mailroom.Domain{Status: mailroom.DomainFailed, CreatedAt: created}, created.Add(100*time.Hour)); got != nil {
		t.Errorf("failed domain scheduled for %s, want no automatic check", fmtTime(got))
	}
}

// A domain that follows its schedule: never published, it is checked on the
// backing-off schedule and fails exactly when its 72 hours are up; once
// verified, removing its records moves it to temporary_failure and, 72 hours
// of 15-minute checks later, to failed.
func TestDomainLifecycleFollowingTheSchedule(t *testing.T) {
	d := &mailroom.Domain{Status: mailroom.DomainPending, CreatedAt: created}
	d.NextCheckAt = mailroom.NextDomainCheck(d, created)
	checks := 0
	var events []string
	for d.NextCheckAt != nil {
		checks++
		if e := mailroom.ApplyDomainCheck(d, records(F, F, F, P), false, *d.NextCheckAt); e != "" {
			events = append(events, e)
		}
	}
	if d.Status != mailroom.DomainFailed || len(events) != 1 || events[0] != mailroom.EventDomainFailed {
		t.Fatalf("status %s, events %v; want failed once", d.Status, events)
	}
	if !d.LastCheckedAt.Equal(created.Add(72 * time.Hour)) {
		t.Errorf("failed at %s, want created+72h", fmtTime(d.LastCheckedAt))
	}
	// 6 checks in the first 1h48m, then every 2h up to 71h48m (35), then
	// the last at 72h.
	if checks != 42 {
		t.Errorf("%d checks in 72 hours, want 42", checks)
	}

	// The customer fixes the records and asks for a check.
	fixed := created.Add(80 * time.Hour)
	if e := mailroom.ApplyDomainCheck(d, records(V, V, V, V), false, fixed); e != mailroom.EventDomainVerified {
		t.Fatalf("manual check of fixed records: event %q", e)
	}
	// A day later the records are gone.
	gone := *d.NextCheckAt
	if e := mailroom.ApplyDomainCheck(d, records(V, F, F, V), false, gone); e != mailroom.EventDomainTemporaryFailure {
		t.Fatalf("records removed: event %q", e)
	}
	if !d.Status.CanSend() {
		t.Error("a domain in its grace period must keep sending")
	}
	checks = 0
	for d.Status == mailroom.DomainTemporaryFailure {
		checks++
		mailroom.ApplyDomainCheck(d, records(V, F, F, V), false, *d.NextCheckAt)
	}
	if d.Status != mailroom.DomainFailed || !d.LastCheckedAt.Equal(gone.Add(72*time.Hour)) {
		t.Errorf("status %s at %s, want failed at %s", d.Status, fmtTime(d.LastCheckedAt), fmtTime(&gone))
	}
	if checks != 72*4 {
		t.Errorf("%d checks in the grace period, want one every 15 minutes (%d)", checks, 72*4)
	}
	if d.Status.CanSend() {
		t.Error("a failed domain must not send")
	}
}
