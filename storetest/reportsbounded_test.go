package storetest

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/mailroom/mailroom"
	"github.com/mailroom/mailroom/inbound"
)

// Issue 27: one DSN of 1,000 "delayed" blocks for one recipient wrote
// 1,000 email.deferred events and as many webhook deliveries per endpoint;
// 40 of them left 40,003 events on one message.

func init() {
	extraSuites = append(extraSuites,
		suite{"ReportsRepeatedBlocksCollapse", testReportsRepeatedBlocksCollapse},
		suite{"ReportsRepeatedDelaysBounded", testReportsRepeatedDelaysBounded},
		suite{"ReportsMostSevereBlockWins", testReportsMostSevereBlockWins},
		suite{"ReportsBounceComplaintFlipsBounded", testReportsBounceComplaintFlipsBounded},
	)
}

// rawDSN is a DSN as an MTA writes it (RFC 3464: multipart/report with a
// message/delivery-status part), with the per-recipient blocks given.
func rawDSN(to string, blocks []string) []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, "From: MAILER-DAEMON@mx.example.net\r\nTo: %s\r\nSubject: Delayed Mail (still being retried)\r\n", to)
	b.WriteString("Auto-Submitted: auto-replied\r\nMIME-Version: 1.0\r\n")
	b.WriteString("Content-Type: multipart/report; report-type=delivery-status; boundary=\"B\"\r\n\r\n")
	b.WriteString("--B\r\nContent-Type: text/plain\r\n\r\nYour message has not been delivered yet.\r\n\r\n")
	b.WriteString("--B\r\nContent-Type: message/delivery-status\r\n\r\nReporting-MTA: dns; mx.example.net\r\n")
	for _, blk := range blocks {
		b.WriteString("\r\n" + blk)
	}
	b.WriteString("\r\n--B--\r\n")
	return b.Bytes()
}

func dsnBlock(addr, action, status, diag string) string {
	return "Final-Recipient: rfc822; " + addr + "\r\nAction: " + action + "\r\nStatus: " + status +
		"\r\nDiagnostic-Code: smtp; " + diag + "\r\n"
}

// parsedDSN is rawDSN as the return-path MX reads it, checked to keep
// every block.
func parsedDSN(t *testing.T, to string, blocks []string) *mailroom.Report {
	t.Helper()
	r, err := inbound.ParseReport(bytes.NewReader(rawDSN(to, blocks)))
	if err != nil {
		t.Fatal(err)
	}
	if r.Kind != mailroom.ReportDSN || len(r.Recipients) != len(blocks) {
		t.Fatalf("parsed a %s with %d blocks, want a dsn with %d", r.Kind, len(r.Recipients), len(blocks))
	}
	return r
}

// thousandDelays is a DSN of 1,000 "delayed" blocks for addr, in varying
// case, as in the finding.
func thousandDelays(t *testing.T, to, addr string) *mailroom.Report {
	blocks := make([]string, 1000)
	for i := range blocks {
		a := addr
		if i%2 == 1 {
			a = strings.ToUpper(addr)
		}
		blocks[i] = dsnBlock(a, "delayed", "4.4.7", "451 4.4.7 still trying")
	}
	return parsedDSN(t, to, blocks)
}

// eventsOf counts a message's events of typ for rcpt, and all its events,
// as the events list has them (every one, page by page).
func eventsOf(t *testing.T, s mailroom.Store, accountID, messageID, typ, rcpt string) (matching, all int) {
	t.Helper()
	cursor := ""
	for {
		page, next := Try2(s.ListEvents(context.Background(), accountID, mailroom.EventFilter{MessageID: messageID},
			mailroom.Page{Limit: mailroom.MaxPageLimit, Cursor: cursor})).Must(t)
		for _, e := range page {
			all++
			if e.Type == typ && e.Recipient == rcpt {
				matching++
			}
		}
		if next == "" {
			return matching, all
		}
		cursor = next
	}
}

// A DSN of 1,000 delayed blocks for one recipient writes one
// email.deferred, and one webhook delivery per endpoint.
func testReportsRepeatedBlocksCollapse(t *testing.T, s mailroom.Store) {
	ctx := context.Background()
	acme := NewAccount(t, s, "acme")
	rp, _ := reportsOn(s)
	m := delivered(t, s, acme, "ann@example.net", "bob@example.net")
	addWebhook(t, s, acme, mailroom.AllEventTypes)
	addWebhook(t, s, acme, mailroom.EventEmailDeferred)
	_, eventsBefore := eventsOf(t, s, acme.ID, m.ID, "", "")
	outboxBefore, _ := backlogOf(t, s)

	to := bounceAddress(rp, m, "ann@example.net")
	if err := rp.Apply(ctx, to, thousandDelays(t, to, "ann@example.net")); err != nil {
		t.Fatal(err)
	}
	deferred, all := eventsOf(t, s, acme.ID, m.ID, mailroom.EventEmailDeferred, "ann@example.net")
	if deferred != 1 || all != eventsBefore+1 {
		t.Fatalf("one DSN of 1,000 delayed blocks for ann: %d email.deferred for her, %d events (were %d); want 1 and %d",
			deferred, all, eventsBefore, eventsBefore+1)
	}
	if outbox, _ := backlogOf(t, s); outbox != outboxBefore+2 {
		t.Fatalf("%d webhook deliveries queued for the report, want 2 (one per endpoint)", outbox-outboxBefore)
	}
	got, _ := messageOf(t, s, acme.ID, m.ID)
	if got.Recipients[0].Status != mailroom.RecipientDelivered || got.Recipients[1].Status != mailroom.RecipientDelivered {
		t.Fatalf("a delay changed a state: %s, %s", got.Recipients[0].Status, got.Recipients[1].Status)
	}
}

// 40 such DSNs leave a handful of events: a recipient keeps at most 3
// email.deferred from delay reports.
func testReportsRepeatedDelaysBounded(t *testing.T, s mailroom.Store) {
	ctx := context.Background()
	acme := NewAccount(t, s, "acme")
	rp, _ := reportsOn(s)
	m := delivered(t, s, acme, "ann@example.net", "bob@example.net")
	// A deferral the delivery itself met (not a report's): not counted.
	own := mailroom.NewEmailEvent(m.Summary(), m.Recipients[0], mailroom.EventEmailDeferred, t0.Add(time.Minute))
	Try(0, s.InsertEventFor(ctx, own, nil)).Must(t)
	addWebhook(t, s, acme, mailroom.AllEventTypes)
	_, eventsBefore := eventsOf(t, s, acme.ID, m.ID, "", "")
	outboxBefore, _ := backlogOf(t, s)

	to := bounceAddress(rp, m, "ann@example.net")
	report := thousandDelays(t, to, "ann@example.net")
	for range 40 {
		if err := rp.Apply(ctx, to, report); err != nil {
			t.Fatal(err)
		}
	}
	const most = 3 // docs/api.md "Mail coming back", "Bounded"
	deferred, all := eventsOf(t, s, acme.ID, m.ID, mailroom.EventEmailDeferred, "ann@example.net")
	if deferred != 1+most || all != eventsBefore+most {
		t.Fatalf("40 DSNs of 1,000 delayed blocks for ann: %d email.deferred for her, %d events (were %d); want %d and %d",
			deferred, all, eventsBefore, 1+most, eventsBefore+most)
	}
	if outbox, _ := backlogOf(t, s); outbox != outboxBefore+most {
		t.Fatalf("%d webhook deliveries queued for 40 reports, want %d", outbox-outboxBefore, most)
	}
	// Another recipient has a bound of its own.
	bob := bounceAddress(rp, m, "bob@example.net")
	if err := rp.Apply(ctx, bob, thousandDelays(t, bob, "bob@example.net")); err != nil {
		t.Fatal(err)
	}
	if n, _ := eventsOf(t, s, acme.ID, m.ID, mailroom.EventEmailDeferred, "bob@example.net"); n != 1 {
		t.Fatalf("bob has %d email.deferred after ann's reports and one of his own, want 1", n)
	}
}

// A report naming one recipient in blocks that say different things
// counts as its most severe: a hard bounce over a soft one over a delay,
// and deliveries count for nothing. Each recipient gets one event; blocks
// naming no recipient of the message change nothing.
func testReportsMostSevereBlockWins(t *testing.T, s mailroom.Store) {
	ctx := context.Background()
	acme := NewAccount(t, s, "acme")
	rp, _ := reportsOn(s)
	m := delivered(t, s, acme, "ann@example.net", "bob@example.net", "cy@example.net")
	addWebhook(t, s, acme, mailroom.AllEventTypes)
	_, eventsBefore := eventsOf(t, s, acme.ID, m.ID, "", "")
	outboxBefore, _ := backlogOf(t, s)

	var blocks []string
	for i := range 1000 {
		switch i % 5 {
		case 0:
			blocks = append(blocks, dsnBlock("ann@example.net", "delayed", "4.4.7", "451 4.4.7 still trying"))
		case 1:
			blocks = append(blocks, dsnBlock("ann@example.net", "failed", "5.2.2", "552 5.2.2 mailbox full"))
		case 2:
			blocks = append(blocks, dsnBlock("bob@example.net", "delivered", "2.0.0", "250 2.0.0 ok"))
		case 3:
			blocks = append(blocks, dsnBlock("bob@example.net", "failed", "4.2.2", "452 4.2.2 over quota"))
		default:
			blocks = append(blocks, dsnBlock("mallory@example.org", "failed", "5.1.1", "550 5.1.1 no such user"))
		}
	}
	// One hard bounce for ann, late in the report.
	blocks[777] = dsnBlock("ann@example.net", "failed", "5.1.1", "550 5.1.1 <ann@example.net>: user unknown")
	to := bounceAddress(rp, m, "ann@example.net", "bob@example.net", "cy@example.net")
	if err := rp.Apply(ctx, to, parsedDSN(t, to, blocks)); err != nil {
		t.Fatal(err)
	}

	got, _ := messageOf(t, s, acme.ID, m.ID)
	if got.Recipients[0].Status != mailroom.RecipientBounced || !strings.Contains(got.Recipients[0].SMTPResponse, "user unknown") ||
		got.Recipients[1].Status != mailroom.RecipientDelivered || got.Recipients[2].Status != mailroom.RecipientDelivered {
		t.Fatalf("after the report: ann %s (%q), bob %s, cy %s", got.Recipients[0].Status, got.Recipients[0].SMTPResponse,
			got.Recipients[1].Status, got.Recipients[2].Status)
	}
	if sup, err := s.Suppression(ctx, acme.ID, "ann@example.net"); err != nil || sup.Reason != mailroom.SuppressedHardBounce {
		t.Fatalf("ann's suppression: %+v %v", sup, err)
	}
	bounced, all := eventsOf(t, s, acme.ID, m.ID, mailroom.EventEmailBounced, "ann@example.net")
	bobDeferred, _ := eventsOf(t, s, acme.ID, m.ID, mailroom.EventEmailDeferred, "bob@example.net")
	if bounced != 1 || bobDeferred != 1 || all != eventsBefore+2 {
		t.Fatalf("%d email.bounced for ann, %d email.deferred for bob, %d events (were %d); want 1, 1 and %d",
			bounced, bobDeferred, all, eventsBefore, eventsBefore+2)
	}
	if outbox, _ := backlogOf(t, s); outbox != outboxBefore+2 {
		t.Fatalf("%d webhook deliveries queued, want 2", outbox-outboxBefore)
	}
	_, timeline := messageOf(t, s, acme.ID, m.ID)
	last := timeline[len(timeline)-1]
	if last.Type == mailroom.EventEmailDeferred {
		last = timeline[len(timeline)-2]
	}
	if last.Type != mailroom.EventEmailBounced || !strings.Contains(string(last.Data), `"bounceType":"hard"`) {
		t.Fatalf("ann's event: %s %s", last.Type, last.Data)
	}
}

// The outside probe's finding (issue 27): a complaint, then a bounce, then
// a complaint again, each through the recipient's own return path, turned
// the recipient from complained to bounced and back, one event and one
// webhook delivery each: 600 reports wrote 600 events. Each type now stops
// at 3 events a recipient from reports, and the reports past it change
// nothing.
func testReportsBounceComplaintFlipsBounded(t *testing.T, s mailroom.Store) {
	ctx := context.Background()
	acme := NewAccount(t, s, "acme")
	rp, _ := reportsOn(s)
	m := delivered(t, s, acme, "ann@example.net")
	to := bounceAddress(rp, m, "ann@example.net")
	bounce := parsedDSN(t, to, []string{dsnBlock("ann@example.net", "failed", "5.2.2", "552 5.2.2 mailbox full")})
	complaint := &mailroom.Report{Kind: mailroom.ReportComplaint, FeedbackType: "abuse",
		OriginalMessageID: strings.TrimPrefix(m.ID, mailroom.PrefixMessage) + "@shop.example", OriginalRecipient: "ann@example.net"}
	_, eventsBefore := eventsOf(t, s, acme.ID, m.ID, "", "")
	for range 20 {
		for _, r := range []*mailroom.Report{complaint, bounce} {
			if err := rp.Apply(ctx, to, r); err != nil {
				t.Fatal(err)
			}
		}
	}
	const most = 3 // docs/api.md "Mail coming back", "Bounded"
	complained, _ := eventsOf(t, s, acme.ID, m.ID, mailroom.EventEmailComplained, "ann@example.net")
	bounced, all := eventsOf(t, s, acme.ID, m.ID, mailroom.EventEmailBounced, "ann@example.net")
	if complained != most || bounced != most || all != eventsBefore+2*most {
		t.Fatalf("20 complaints and 20 bounces, alternating, for ann: %d email.complained, %d email.bounced, %d new events; want %d, %d and %d",
			complained, bounced, all-eventsBefore, most, most, 2*most)
	}
}
