package mailroom

import (
	"strings"
	"time"
)

// receivingMXPriority is the preference of a receiving domain's MX: 10, as
// the return path's, what DNS providers' forms suggest for a single MX.
const receivingMXPriority = 10

// receivingUnverifiedInterval is how often a domain that may send but
// whose receiving MX is not verified yet is checked again, rather than
// every verifiedInterval: the customer turned receiving on and is at the
// DNS provider's form.
const receivingUnverifiedInterval = 15 * time.Minute

// ReceivingRecord is the MX record a receiving domain publishes (docs/api.md
// "Receiving mail"): at the domain itself, pointing at the service's MX
// host (s.MXHost, --mx-host), pending. It is required to receive mail, not
// to send: the domain's status does not depend on it (IsSendingRecord).
func ReceivingRecord(domain string, s RecordSettings) DNSRecord {
	priority := receivingMXPriority
	return DNSRecord{
		Purpose:  PurposeReceiving,
		Type:     "MX",
		Name:     domain,
		Value:    strings.TrimSuffix(strings.ToLower(s.MXHost), "."),
		Priority: &priority,
		Required: true,
		Status:   RecordPending,
	}
}

// IsSendingRecord says whether r decides the domain's status (the
// records that let it send): all but the receiving MX. A domain that
// turns receiving on before its MX is published keeps sending.
func IsSendingRecord(r DNSRecord) bool { return r.Purpose != PurposeReceiving }

// SetReceiving turns d's receiving on (adding rec, its MX, unless d has one)
// or off (removing it), and says whether d changed. Turned on, a domain
// with an automatic check due is checked within a minute, so that the
// customer who published the MX first sees it verified soon.
func SetReceiving(d *Domain, on bool, rec DNSRecord, now time.Time) bool {
	if d.Receiving == on {
		return false
	}
	d.Receiving = on
	d.Records = withoutReceivingRecord(d.Records)
	if on {
		d.Records = append(d.Records, rec)
		if soon := now.Add(time.Minute); d.NextCheckAt != nil && soon.Before(*d.NextCheckAt) {
			d.NextCheckAt = &soon
		}
	}
	return true
}

// SettleReceivingRecord makes d's records agree with its receiving flag as
// stored now (receiving), after a check that may have started before the
// flag changed: the MX joins from stored (the records before the check)
// when the check's records lack it, and leaves when receiving was turned
// off meanwhile.
func SettleReceivingRecord(d *Domain, receiving bool, stored []DNSRecord) {
	d.Receiving = receiving
	if !receiving {
		d.Records = withoutReceivingRecord(d.Records)
		return
	}
	if receivingRecord(d.Records) != nil {
		return
	}
	if r := receivingRecord(stored); r != nil {
		d.Records = append(d.Records, *r)
	}
}

// ReceivesMail reports whether the inbound MX takes mail for d (docs/api.md
// "Receiving mail"): its receiving flag is set, it may send (verified, or
// within the grace of a temporary failure, so that one record missing
// for a while does not turn a customer's mail away with a 550), and its
// MX record of purpose receiving is verified: until the customer's MX
// points at the service, mail for the domain has no reason to arrive
// here.
func (d *Domain) ReceivesMail() bool {
	if !d.Receiving || !d.Status.CanSend() {
		return false
	}
	r := receivingRecord(d.Records)
	return r != nil && r.Status == RecordVerified
}

// receivingUnverified says whether d receives mail once its MX verifies:
// it wants to and may send, and the MX is not verified yet.
func receivingUnverified(d *Domain) bool {
	if !d.Receiving || !d.Status.CanSend() {
		return false
	}
	r := receivingRecord(d.Records)
	return r != nil && r.Status != RecordVerified
}

func receivingRecord(records []DNSRecord) *DNSRecord {
	for i := range records {
		if records[i].Purpose == PurposeReceiving {
			return &records[i]
		}
	}
	return nil
}

func withoutReceivingRecord(records []DNSRecord) []DNSRecord {
	out := make([]DNSRecord, 0, len(records))
	for _, r := range records {
		if r.Purpose != PurposeReceiving {
			out = append(out, r)
		}
	}
	return out
}
