package storetest

import (
	"context"
	"strings"
	"testing"

	"github.com/mailroom/mailroom"
)

func init() {
	extraSuites = append(extraSuites, suite{"ReportsEventData", testReportsEventData})
}

// The data of the events a report writes (inbound.Reports: a DSN's
// bounce and deferral, a complaint), as a message's timeline and the
// events list give it, byte for byte: async, the report's own reply and
// text, the bounce type by the report's status, the tags and subject of
// the message. The literals are what the service wrote before event data
// was made typed (issue 26); "MSG" stands for the message's id.
func testReportsEventData(t *testing.T, s mailroom.Store) {
	ctx := context.Background()
	acme := NewAccount(t, s, "acme")
	rp, _ := reportsOn(s)
	m := delivered(t, s, acme, "ann@example.net", "bob@example.net")
	reports := []struct {
		to     string
		report *mailroom.Report
	}{
		{bounceAddress(rp, m, "ann@example.net"), &mailroom.Report{Kind: mailroom.ReportDSN, Text: "Your mail to <ann> could not be delivered.",
			Recipients: []mailroom.ReportRecipient{{FinalRecipient: "ann@example.net", Action: "failed", Status: "5.1.1",
				DiagnosticCode: "550 5.1.1 <ann@example.net>: User unknown & \"gone\""}}}},
		{bounceAddress(rp, m, "bob@example.net"), &mailroom.Report{Kind: mailroom.ReportDSN,
			Recipients: []mailroom.ReportRecipient{{FinalRecipient: "bob@example.net", Action: "delayed", Status: "4.4.7"}}}},
		{bounceAddress(rp, m, "ann@example.net", "bob@example.net"), &mailroom.Report{Kind: mailroom.ReportComplaint, FeedbackType: "abuse", Text: "This is spam <really>",
			OriginalRecipient: "bob@example.net"}},
	}
	for _, r := range reports {
		if err := rp.Apply(ctx, r.to, r.report); err != nil {
			t.Fatal(err)
		}
	}
	head := func(rcpt string) string {
		return `{"messageId":"MSG","recipient":"` + rcpt + `","from":"orders@shop.example","subject":"Your receipt","tags":{"kind":"receipt"},`
	}
	want := map[string]string{
		"email.bounced ann@example.net": head("ann@example.net") + `"smtpCode":550,"smtpResponse":"550 5.1.1 \u003cann@example.net\u003e: User unknown \u0026 \"gone\"",` +
			`"bounceType":"hard","async":true,"reportText":"Your mail to \u003cann\u003e could not be delivered.","attempt":1}`,
		"email.deferred bob@example.net":   head("bob@example.net") + `"smtpCode":450,"smtpResponse":"450 4.4.7","bounceType":"soft","async":true,"attempt":1}`,
		"email.complained bob@example.net": head("bob@example.net") + `"async":true,"reportText":"This is spam \u003creally\u003e","attempt":1}`,
	}
	_, timeline := messageOf(t, s, acme.ID, m.ID)
	listed, _ := Try2(s.ListEvents(ctx, acme.ID, mailroom.EventFilter{MessageID: m.ID}, mailroom.Page{})).Must(t)
	for how, events := range map[string][]*mailroom.Event{"the timeline": timeline, "the events list": listed} {
		n := 0
		for _, e := range events {
			w, ok := want[e.Type+" "+e.Recipient]
			if !ok {
				continue
			}
			n++
			if w = strings.ReplaceAll(w, "MSG", m.ID); string(e.Data) != w {
				t.Errorf("%s, %s %s:\n got  %s\n want %s", how, e.Type, e.Recipient, e.Data, w)
			}
		}
		if n != len(want) {
			t.Errorf("%s: %d of the reports' events, want %d", how, n, len(want))
		}
	}
}
