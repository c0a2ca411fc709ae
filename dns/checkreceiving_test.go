package dns_test

import (
	"testing"

	"github.com/mailroom/mailroom"
)

// A receiving domain's MX (docs/api.md "Receiving mail") is checked like the
// return path's: missing, pointing elsewhere or a null MX fails it, and an
// MX naming the service's host among others verifies it; the sending
// records are unaffected.
func TestCheckReceivingMX(t *testing.T) {
	f := newFixture(t)
	f.domain.Receiving = true
	f.domain.Records = append(f.domain.Records, mailroom.ReceivingRecord(f.domain.Name, mailroom.DefaultRecordSettings(serviceHost)))
	f.publish(mailroom.PurposeDKIM, mailroom.PurposeSPF, mailroom.PurposeReturnPath)

	recs, _ := f.check(t)
	wantStatus(t, recs[mailroom.PurposeReceiving], mailroom.RecordFailed, "No MX record was found at example.com; publish an MX record pointing at mail.example.net")
	wantStatus(t, recs[mailroom.PurposeReturnPath], mailroom.RecordVerified, "")

	f.srv.SetMX("example.com", 10, "mx.elsewhere.example")
	recs, _ = f.check(t)
	wantStatus(t, recs[mailroom.PurposeReceiving], mailroom.RecordFailed, "No MX record at example.com points at mail.example.net")

	// The service as a second MX, in another case, is the customer's
	// choice (a backup, or a filter in front): verified, with a note
	// that mail goes to the other host first.
	f.srv.SetMX("example.com", 20, "MAIL.example.net.")
	recs, _ = f.check(t)
	wantStatus(t, recs[mailroom.PurposeReceiving], mailroom.RecordVerified,
		"mx.elsewhere.example (preference 10) comes before mail.example.net (preference 20): senders deliver there first")

	// Preferred, beside a backup: nothing to say.
	f.srv.Remove("example.com")
	f.srv.SetMX("example.com", 10, "mail.example.net")
	f.srv.SetMX("example.com", 20, "mx.elsewhere.example")
	recs, _ = f.check(t)
	wantStatus(t, recs[mailroom.PurposeReceiving], mailroom.RecordVerified, "")

	f.srv.Remove("example.com")
	f.srv.SetMX("example.com", 0, ".")
	recs, _ = f.check(t)
	wantStatus(t, recs[mailroom.PurposeReceiving], mailroom.RecordFailed, "null MX (RFC 7505), which refuses all mail, so no mail could arrive")
}
