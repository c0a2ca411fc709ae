package mailroom

import "time"

// How long a domain may go without its records before it fails (docs/api.md "Domains"):
// a new domain has DomainVerifyWindow from creation to be verified, and a
// verified domain whose records went missing keeps sending for
// DomainGracePeriod while its owner puts them back.
const (
	DomainVerifyWindow = 72 * time.Hour
	DomainGracePeriod  = 72 * time.Hour
)

// Re-check intervals. A pending domain is checked often at first, while its
// owner is at the DNS provider's form, then every two hours until its window
// closes; pendingCheckOffsets are the check times counted from creation.
// A failed domain is checked only when asked to (POST …/verify).
var pendingCheckOffsets = []time.Duration{
	1 * time.Minute,
	3 * time.Minute,   // +2m
	8 * time.Minute,   // +5m
	18 * time.Minute,  // +10m
	48 * time.Minute,  // +30m
	108 * time.Minute, // +1h
}

const (
	pendingLateInterval      = 2 * time.Hour
	temporaryFailureInterval = 15 * time.Minute
	verifiedInterval         = 24 * time.Hour
	indeterminateMaxInterval = 15 * time.Minute
)

// ApplyDomainCheck records the outcome of a DNS check on d (its records, as
// dns.Checker returns them) and moves d through the states of docs/api.md "Domains".
// It returns the event to write with the change (EventDomainVerified,
// EventDomainFailed, EventDomainTemporaryFailure), or "" when the status did
// not change.
//
//   - pending → verified when every required record is verified;
//     pending → failed when that has not happened DomainVerifyWindow after
//     creation.
//   - verified → temporary_failure when a required record is failed. A record
//     that could not be checked (a DNS timeout) keeps its previous status,
//     so an outage of DNS never starts the grace period.
//   - temporary_failure → verified when the records are back;
//     temporary_failure → failed DomainGracePeriod after FailingSince.
//   - failed → verified when a check (only ever a manual one: failed domains
//     are not re-checked automatically) finds every required record
//     verified; the customer fixed the records and asked, so the domain
//     need not be deleted and added again with a new key.
//
// The deadlines count whether or not the last check was indeterminate:
// a domain whose records could not be proven for 72 hours has failed, even if
// its nameservers are the reason. indeterminate only brings the next check
// forward (at most 15 minutes away), to settle the question sooner.
//
// VerifiedAt is when the domain last became verified; FailingSince is set on
// entering temporary_failure and cleared on becoming verified.
//
// Before the status is decided, the DKIM keys settle (SettleDKIMKeys): a
// rotation whose new record was found moves signing to the new key, whose
// record is then the required one.
func ApplyDomainCheck(d *Domain, records []DNSRecord, indeterminate bool, now time.Time) (event string) {
	d.Records = records
	SettleDKIMKeys(d, now)
	d.LastCheckedAt = domainTimePtr(now)
	verified := requiredRecordsVerified(records)

	switch d.Status {
	case DomainVerified:
		if requiredRecordFailed(records) {
			d.Status = DomainTemporaryFailure
			d.FailingSince = domainTimePtr(now)
			event = EventDomainTemporaryFailure
		}
	case DomainTemporaryFailure:
		if d.FailingSince == nil {
			d.FailingSince = domainTimePtr(now)
		}
		switch {
		case verified:
			event = d.becomeVerified(now)
		case !now.Before(d.FailingSince.Add(DomainGracePeriod)):
			d.Status = DomainFailed
			event = EventDomainFailed
		}
	case DomainFailed:
		if verified {
			event = d.becomeVerified(now)
		}
	default: // DomainPending
		switch {
		case verified:
			event = d.becomeVerified(now)
		case !now.Before(d.CreatedAt.Add(DomainVerifyWindow)):
			d.Status = DomainFailed
			event = EventDomainFailed
		}
	}
	d.NextCheckAt = nextDomainCheck(d, now, indeterminate)
	return event
}

// NextDomainCheck is when d, in its current status, is next due for an
// automatic check; nil for a failed domain. For a domain just created, call
// it with now = CreatedAt.
func NextDomainCheck(d *Domain, now time.Time) *time.Time {
	return nextDomainCheck(d, now, false)
}

func nextDomainCheck(d *Domain, now time.Time, indeterminate bool) *time.Time {
	var next time.Time
	switch d.Status {
	case DomainFailed:
		return nil
	case DomainVerified:
		next = now.Add(verifiedInterval)
	case DomainTemporaryFailure:
		next = now.Add(temporaryFailureInterval)
		if d.FailingSince != nil {
			next = earlierTime(next, d.FailingSince.Add(DomainGracePeriod))
		}
	default: // DomainPending
		next = nextPendingCheck(d.CreatedAt, now)
		next = earlierTime(next, d.CreatedAt.Add(DomainVerifyWindow))
	}
	if indeterminate {
		next = earlierTime(next, now.Add(indeterminateMaxInterval))
	}
	if receivingUnverified(d) {
		next = earlierTime(next, now.Add(receivingUnverifiedInterval))
	}
	// A deadline already passed (the service was down) is due now.
	if next.Before(now) {
		next = now
	}
	return domainTimePtr(next)
}

// nextPendingCheck is the first scheduled check of a pending domain after
// now. The schedule counts from creation, so a manual check does not shift it.
func nextPendingCheck(created, now time.Time) time.Time {
	age := now.Sub(created)
	for _, off := range pendingCheckOffsets {
		if off > age {
			return created.Add(off)
		}
	}
	last := pendingCheckOffsets[len(pendingCheckOffsets)-1]
	n := (age-last)/pendingLateInterval + 1
	return created.Add(last + n*pendingLateInterval)
}

func (d *Domain) becomeVerified(now time.Time) string {
	d.Status = DomainVerified
	d.VerifiedAt = domainTimePtr(now)
	d.FailingSince = nil
	return EventDomainVerified
}

// requiredRecordsVerified: the domain has required records and all are
// verified. Optional ones (DMARC) never hold a domain back, nor does the
// receiving MX (IsSendingRecord), which is required to receive, not send.
func requiredRecordsVerified(records []DNSRecord) bool {
	n := 0
	for _, r := range records {
		if !r.Required || !IsSendingRecord(r) {
			continue
		}
		if r.Status != RecordVerified {
			return false
		}
		n++
	}
	return n > 0
}

func requiredRecordFailed(records []DNSRecord) bool {
	for _, r := range records {
		if r.Required && IsSendingRecord(r) && r.Status == RecordFailed {
			return true
		}
	}
	return false
}

func earlierTime(a, b time.Time) time.Time {
	if b.Before(a) {
		return b
	}
	return a
}

func domainTimePtr(t time.Time) *time.Time { return &t }
