package storetest

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/mailroom/mailroom"
	"github.com/mailroom/mailroom/inbound"
	"github.com/mailroom/mailroom/unsubscribe"
)

func init() {
	extraSuites = append(extraSuites,
		suite{"ReportsBounceADeliveredRecipient", testReportsBounce},
		suite{"ReportsDelayAndForgery", testReportsDelayAndForgery},
		suite{"ReportsComplaint", testReportsComplaint},
		suite{"ReportsMailtoUnsubscribe", testReportsMailtoUnsubscribe},
		suite{"ReportsComplaintNamingACoRecipient", testReportsComplaintNamingACoRecipient},
	)
}

// reportsOn is the Reports service on s, as serve builds it.
func reportsOn(s mailroom.Store) (*inbound.Reports, *[]string) {
	var dropped []string
	return &inbound.Reports{Store: s, ReturnPaths: inbound.ReturnPaths{Key: []byte("report-key")},
		Now: func() time.Time { return t0.Add(time.Hour) }, Dropped: func(r string) { dropped = append(dropped, r) }}, &dropped
}

// delivered accepts a message to the addresses and records each as
// delivered, as the delivery worker does.
func delivered(t *testing.T, s mailroom.Store, acct *mailroom.Account, to ...string) *mailroom.Message {
	t.Helper()
	return deliver(t, s, NewMessage(acct, t0, to...))
}

// deliver accepts m and records each of its recipients as delivered.
func deliver(t *testing.T, s mailroom.Store, m *mailroom.Message) *mailroom.Message {
	t.Helper()
	ctx := context.Background()
	Try(s.AcceptMessage(ctx, m)).Must(t)
	qs := Try(claim(s, "node_a", t0, 100)).Must(t)
	var attempts []*mailroom.Attempt
	for _, q := range qs {
		r := q.Recipient
		r.Status, r.Attempts, r.SMTPCode, r.SMTPResponse = mailroom.RecipientDelivered, 1, 250, "250 ok"
		attempts = append(attempts, &mailroom.Attempt{Recipient: &r, Message: q.Message, ClaimToken: q.ClaimToken,
			Event: mailroom.NewEmailEvent(q.Message, &r, mailroom.EventEmailDelivered, t0)})
	}
	if err := s.RecordAttempts(ctx, attempts); err != nil {
		t.Fatal(err)
	}
	return m
}

func bounceAddress(rp *inbound.Reports, m *mailroom.Message, to ...string) string {
	return rp.ReturnPaths.EnvelopeSender(m.ID, "bounces.shop.example", to)
}

// A DSN for a delivered recipient bounces it (a late bounce), suppresses
// the address when the failure is the mailbox's, and writes an async
// email.bounced; the message's other recipient keeps its state.
func testReportsBounce(t *testing.T, s mailroom.Store) {
	ctx := context.Background()
	acme := NewAccount(t, s, "acme")
	dom := NewDomain(acme, "shop.example", t0)
	dom.Status = mailroom.DomainVerified // its return-path MX is published: the MX takes its bounces
	Try(0, s.CreateDomain(ctx, dom, mailroom.DefaultMaxDomains)).Must(t)
	rp, _ := reportsOn(s)
	if ok := Try(rp.Accepts(ctx, "anything@bounces.shop.example")).Must(t); !ok {
		t.Fatal("the bounce subdomain of an added domain is not accepted")
	}
	for _, other := range []string{"x@shop.example", "x@bounces.other.example", "no-at-sign"} {
		if ok := Try(rp.Accepts(ctx, other)).Must(t); ok {
			t.Fatalf("%s is accepted", other)
		}
	}

	m := delivered(t, s, acme, "ann@example.net", "bob@example.net")
	dsn := &mailroom.Report{Kind: mailroom.ReportDSN, Recipients: []mailroom.ReportRecipient{{
		FinalRecipient: "Ann@Example.net", Action: "failed", Status: "5.1.1",
		DiagnosticCode: "550 5.1.1 <ann@example.net>: Recipient address rejected: User unknown"}}}
	if err := rp.Apply(ctx, bounceAddress(rp, m, "ann@example.net"), dsn); err != nil {
		t.Fatal(err)
	}
	// The same DSN again (its sender retried): no second event.
	if err := rp.Apply(ctx, bounceAddress(rp, m, "ann@example.net"), dsn); err != nil {
		t.Fatal(err)
	}
	got, events := messageOf(t, s, acme.ID, m.ID)
	bounces := 0
	for _, e := range events {
		if e.Type == mailroom.EventEmailBounced {
			bounces++
		}
	}
	if bounces != 1 {
		t.Fatalf("%d email.bounced events after the same DSN twice, want 1", bounces)
	}
	if got.Recipients[0].Status != mailroom.RecipientBounced || got.Recipients[0].SMTPCode != 550 ||
		!strings.Contains(got.Recipients[0].SMTPResponse, "User unknown") || got.Recipients[1].Status != mailroom.RecipientDelivered {
		t.Fatalf("after the DSN: %+v / %+v", got.Recipients[0], got.Recipients[1])
	}
	if got.Status != mailroom.MessagePartiallyDelivered {
		t.Fatalf("message status %s, want partially_delivered", got.Status)
	}
	last := events[len(events)-1]
	if last.Type != mailroom.EventEmailBounced || !strings.Contains(string(last.Data), `"bounceType":"hard"`) ||
		!strings.Contains(string(last.Data), `"async":true`) {
		t.Fatalf("last event %s %s", last.Type, last.Data)
	}
	if sup, err := s.Suppression(ctx, acme.ID, "ann@example.net"); err != nil || sup.Reason != mailroom.SuppressedHardBounce || sup.MessageID != m.ID {
		t.Fatalf("suppression %+v %v", sup, err)
	}
}

// A delayed DSN writes email.deferred and changes no state; a report to a
// forged or altered token, or about a recipient the message did not have,
// changes nothing; auto-replies change nothing.
func testReportsDelayAndForgery(t *testing.T, s mailroom.Store) {
	ctx := context.Background()
	acme := NewAccount(t, s, "acme")
	rp, dropped := reportsOn(s)
	m := delivered(t, s, acme, "ann@example.net", "bob@example.net")
	addr := bounceAddress(rp, m, "ann@example.net")

	delay := &mailroom.Report{Kind: mailroom.ReportDSN, Recipients: []mailroom.ReportRecipient{{
		FinalRecipient: "ann@example.net", Action: "delayed", Status: "4.4.7"}}}
	if err := rp.Apply(ctx, addr, delay); err != nil {
		t.Fatal(err)
	}
	got, events := messageOf(t, s, acme.ID, m.ID)
	if got.Recipients[0].Status != mailroom.RecipientDelivered || events[len(events)-1].Type != mailroom.EventEmailDeferred {
		t.Fatalf("after a delay: %s, last event %s", got.Recipients[0].Status, events[len(events)-1].Type)
	}
	before := len(events)

	fail := func(rcpt string) *mailroom.Report {
		return &mailroom.Report{Kind: mailroom.ReportDSN, Recipients: []mailroom.ReportRecipient{{
			FinalRecipient: rcpt, Action: "failed", Status: "5.1.1"}}}
	}
	forger := inbound.ReturnPaths{Key: []byte("a guess")}
	for _, c := range []struct {
		rcpt   string
		report *mailroom.Report
	}{
		// Ann's token, naming Bob: a co-recipient cannot bounce another.
		{addr, fail("bob@example.net")},
		// A token made under another key.
		{forger.EnvelopeSender(m.ID, "bounces.shop.example", []string{"bob@example.net"}), fail("bob@example.net")},
		// An altered token.
		{strings.Replace(addr, "-", "-0", 1), fail("ann@example.net")},
		// A recipient the message did not have.
		{bounceAddress(rp, m, "ann@example.net", "bob@example.net"), fail("carol@example.net")},
		// An auto-reply.
		{addr, &mailroom.Report{Kind: mailroom.ReportAutoReply}},
	} {
		if err := rp.Apply(ctx, c.rcpt, c.report); err != nil {
			t.Fatal(err)
		}
	}
	got, events = messageOf(t, s, acme.ID, m.ID)
	if got.Recipients[0].Status != mailroom.RecipientDelivered || got.Recipients[1].Status != mailroom.RecipientDelivered || len(events) != before {
		t.Fatalf("forged reports changed the log: %s %s, %d events (was %d)", got.Recipients[0].Status, got.Recipients[1].Status, len(events), before)
	}
	for _, a := range []string{"ann@example.net", "bob@example.net"} {
		if _, err := s.Suppression(ctx, acme.ID, a); !mailroom.IsCode(err, mailroom.ECodeNotFound) {
			t.Fatalf("a forged report suppressed %s (%v)", a, err)
		}
	}
	if strings.Join(*dropped, " ") != "unmatched unverified unverified unmatched auto_reply" {
		t.Fatalf("dropped: %v", *dropped)
	}
}

// An abuse report marks the recipient complained and suppresses it, found
// through the token of the address it came to or, from a feedback loop that
// writes to its own address, through the Message-ID it carries.
func testReportsComplaint(t *testing.T, s mailroom.Store) {
	ctx := context.Background()
	acme := NewAccount(t, s, "acme")
	rp, _ := reportsOn(s)
	m := delivered(t, s, acme, "ann@example.net")
	arf := &mailroom.Report{Kind: mailroom.ReportComplaint, FeedbackType: "abuse",
		OriginalMessageID: strings.TrimPrefix(m.ID, mailroom.PrefixMessage) + "@shop.example", OriginalRecipient: "ann@example.net"}
	// To another domain's bounce subdomain: not this message's.
	if err := rp.Apply(ctx, "fbl@bounces.other.example", arf); err != nil {
		t.Fatal(err)
	}
	if got, _ := messageOf(t, s, acme.ID, m.ID); got.Recipients[0].Status != mailroom.RecipientDelivered {
		t.Fatalf("a complaint to another domain's address changed the recipient: %s", got.Recipients[0].Status)
	}
	if err := rp.Apply(ctx, "fbl@bounces.shop.example", arf); err != nil {
		t.Fatal(err)
	}
	got, events := messageOf(t, s, acme.ID, m.ID)
	if got.Recipients[0].Status != mailroom.RecipientComplained || events[len(events)-1].Type != mailroom.EventEmailComplained {
		t.Fatalf("after the complaint: %s, last event %s", got.Recipients[0].Status, events[len(events)-1].Type)
	}
	if sup, err := s.Suppression(ctx, acme.ID, "ann@example.net"); err != nil || sup.Reason != mailroom.SuppressedComplaint {
		t.Fatalf("suppression %+v %v", sup, err)
	}
}

// A mail to a marketing message's mailto unsubscribe address suppresses
// the recipient for marketing mail; one to a forged address changes
// nothing, and neither touches the recipient's delivery state.
func testReportsMailtoUnsubscribe(t *testing.T, s mailroom.Store) {
	ctx := context.Background()
	acme := NewAccount(t, s, "acme")
	rp, dropped := reportsOn(s)
	tokens := unsubscribe.Tokens{Key: []byte("unsubscribe-key")}
	rp.Unsubscribes = &unsubscribe.Service{Tokens: tokens, Store: s}
	m := delivered(t, s, acme, "ann@example.net", "bob@example.net")
	local := Try(tokens.LocalPart(mailroom.Unsubscribe{AccountID: acme.ID, MessageID: m.ID, Address: "bob@example.net"})).Must(t)
	forged := Try(unsubscribe.Tokens{Key: []byte("guess")}.LocalPart(mailroom.Unsubscribe{AccountID: acme.ID, MessageID: m.ID, Address: "ann@example.net"})).Must(t)
	if err := rp.Apply(ctx, forged+"@bounces.shop.example", &mailroom.Report{Kind: mailroom.ReportUnknown}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Suppression(ctx, acme.ID, "ann@example.net"); !mailroom.IsCode(err, mailroom.ECodeNotFound) {
		t.Fatalf("a forged mailto unsubscribed ann (%v)", err)
	}
	if err := rp.Apply(ctx, local+"@bounces.shop.example", &mailroom.Report{Kind: mailroom.ReportUnknown}); err != nil {
		t.Fatal(err)
	}
	if sup, err := s.Suppression(ctx, acme.ID, "bob@example.net"); err != nil || sup.Reason != mailroom.SuppressedUnsubscribe {
		t.Fatalf("after the mailto unsubscribe: %+v %v", sup, err)
	}
	if got, _ := messageOf(t, s, acme.ID, m.ID); got.Recipients[1].Status != mailroom.RecipientDelivered {
		t.Fatalf("an unsubscribe changed the recipient's state to %s", got.Recipients[1].Status)
	}
	if strings.Join(*dropped, " ") != "unverified" {
		t.Fatalf("dropped: %v", *dropped)
	}
}

// A complaint found by its Message-ID alone (no token) cannot name one
// recipient of several: every recipient saw the Message-ID and the others'
// addresses, so it could come from a co-recipient.
func testReportsComplaintNamingACoRecipient(t *testing.T, s mailroom.Store) {
	ctx := context.Background()
	acme := NewAccount(t, s, "acme")
	rp, dropped := reportsOn(s)
	m := delivered(t, s, acme, "ann@example.net", "bob@example.org")
	arf := &mailroom.Report{Kind: mailroom.ReportComplaint, FeedbackType: "abuse",
		OriginalMessageID: strings.TrimPrefix(m.ID, mailroom.PrefixMessage) + "@shop.example", OriginalRecipient: "bob@example.org"}
	if err := rp.Apply(ctx, "fbl@bounces.shop.example", arf); err != nil {
		t.Fatal(err)
	}
	if got, _ := messageOf(t, s, acme.ID, m.ID); got.Recipients[1].Status != mailroom.RecipientDelivered {
		t.Fatalf("a complaint by Message-ID naming a co-recipient changed it to %s", got.Recipients[1].Status)
	}
	if _, err := s.Suppression(ctx, acme.ID, "bob@example.org"); !mailroom.IsCode(err, mailroom.ECodeNotFound) {
		t.Fatalf("bob was suppressed (%v)", err)
	}
	if strings.Join(*dropped, " ") != "unmatched" {
		t.Fatalf("dropped: %v", *dropped)
	}
}
