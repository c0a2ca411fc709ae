package delivery_test

import (
	"context"
	"maps"
	"strings"
	"testing"
	"time"

	"github.com/mailroom/mailroom"
	"github.com/mailroom/mailroom/inbound"
	"github.com/mailroom/mailroom/storetest"
)

// Each transaction's envelope sender speaks only for that transaction's
// recipients (issue 27): a recipient at one domain who sends a DSN to the
// Return-Path of its copy, naming a Cc at another domain, changes nothing
// for it, while the receiving server's own DSN still bounces its recipient.
// The reports go through the Reports service over the same store, with
// the key the deliverer made the envelope senders with.
func TestEnvelopeSenderCoversItsTransactionOnly(t *testing.T) {
	w := newWorld(t, storetest.SQLite.Open(t))
	w.mailDomain("a.example")
	w.mailDomain("b.example")
	d, transport := newDeliverer(w.store, w.domains, realComposer(), w.dns.Addr(), w.mx.Port())
	defer transport.Close()
	id := w.send(t, time.Now(), &mailroom.SendRequest{
		From: "Shop <orders@" + sendingDomain + ">", To: []string{"ann@a.example", "bob@a.example"},
		Cc: []string{"carol@b.example"}, Subject: "Your receipt", Text: "Thanks.",
	})
	deliverAll(t, d)
	mailFrom := map[string]string{}
	for _, m := range w.mx.WaitMessages(t, 2, 10*time.Second) {
		for _, r := range m.Rcpts {
			mailFrom[r] = m.MailFrom
		}
	}
	if mailFrom["ann@a.example"] != mailFrom["bob@a.example"] || mailFrom["ann@a.example"] == mailFrom["carol@b.example"] {
		t.Fatalf("envelope senders by recipient: %v", mailFrom)
	}
	for _, from := range mailFrom {
		if local, _, _ := strings.Cut(from, "@"); len(local) > 64 {
			t.Errorf("envelope sender %q: a local part over 64 octets (RFC 5321 §4.5.3.1.1)", from)
		}
	}

	reports := &inbound.Reports{Store: w.store, ReturnPaths: d.ReturnPaths.(inbound.ReturnPaths), Now: time.Now}
	dsn := func(rcpts ...string) *mailroom.Report {
		r := &mailroom.Report{Kind: mailroom.ReportDSN}
		for _, a := range rcpts {
			r.Recipients = append(r.Recipients, mailroom.ReportRecipient{FinalRecipient: a, Action: "failed", Status: "5.1.1"})
		}
		return r
	}
	ctx := context.Background()
	for _, c := range []struct {
		to     string
		report *mailroom.Report
	}{
		// ann's copy's Return-Path, naming the Cc at another domain.
		{mailFrom["ann@a.example"], dsn("carol@b.example")},
		{mailFrom["ann@a.example"], &mailroom.Report{Kind: mailroom.ReportComplaint, FeedbackType: "abuse", OriginalRecipient: "carol@b.example"}},
		// a.example's server bounces bob; b.example's server carol.
		{mailFrom["ann@a.example"], dsn("bob@a.example")},
	} {
		if err := reports.Apply(ctx, c.to, c.report); err != nil {
			t.Fatal(err)
		}
	}
	status := func() map[string]mailroom.RecipientStatus {
		m, _, err := w.store.Message(ctx, w.acct.ID, id)
		if err != nil {
			t.Fatal(err)
		}
		out := map[string]mailroom.RecipientStatus{}
		for _, r := range m.Recipients {
			out[r.Address] = r.Status
		}
		return out
	}
	want := map[string]mailroom.RecipientStatus{"ann@a.example": mailroom.RecipientDelivered,
		"bob@a.example": mailroom.RecipientBounced, "carol@b.example": mailroom.RecipientDelivered}
	if got := status(); !maps.Equal(got, want) {
		t.Fatalf("after ann's forged reports and a.example's bounce of bob: %v, want %v", got, want)
	}
	if err := reports.Apply(ctx, mailFrom["carol@b.example"], dsn("carol@b.example")); err != nil {
		t.Fatal(err)
	}
	if got := status()["carol@b.example"]; got != mailroom.RecipientBounced {
		t.Fatalf("b.example's DSN to carol's return path: carol is %s, want bounced", got)
	}
}
