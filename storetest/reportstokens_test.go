package storetest

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base32"
	"strings"
	"testing"

	"github.com/mailroom/mailroom"
	"github.com/mailroom/mailroom/inbound"
)

// What a return-path token lets a report change (issue 27): the recipients
// of the one SMTP transaction it was sent in, at the bounce subdomain it
// was minted for; tokens of the older form keep working for their own
// recipients.
func init() {
	extraSuites = append(extraSuites,
		suite{"ReportsTokenCoversItsTransactionOnly", testReportsTokenCoversItsTransactionOnly},
		suite{"ReportsTokenOnlyAtItsBounceSubdomain", testReportsTokenOnlyAtItsBounceSubdomain},
		suite{"ReportsLegacyTokens", testReportsLegacyTokens},
	)
}

// sentFrom is a message of acct from orders@<domain> to the addresses,
// recorded as delivered to each.
func sentFrom(t *testing.T, s mailroom.Store, acct *mailroom.Account, domain string, to ...string) *mailroom.Message {
	t.Helper()
	m := NewMessage(acct, t0, to...)
	m.From.Address, m.Domain = "orders@"+domain, domain
	m.MessageIDHeader = m.ID + "@" + domain
	return deliver(t, s, m)
}

// tokenAt is the address of a current token for the transaction of m to
// rcpts, minted for the bounce subdomain at.
func tokenAt(rp *inbound.Reports, m *mailroom.Message, at string, rcpts ...string) string {
	return rp.ReturnPaths.EnvelopeSender(m.ID, at, rcpts)
}

// legacyTokenAt is a return path of the older form, written here from its
// definition so that the test pins what mail already sent carries:
// "b-<message>-<mac>", the mac over the message id and the one recipient
// ("" for the whole message), at the bounce subdomain at.
func legacyTokenAt(rp *inbound.Reports, m *mailroom.Message, recipient, at string) string {
	h := hmac.New(sha256.New, rp.ReturnPaths.Key)
	h.Write([]byte(m.ID))
	h.Write([]byte{0})
	h.Write([]byte(strings.ToLower(recipient)))
	mac := base32.StdEncoding.WithPadding(base32.NoPadding).EncodeToString(h.Sum(nil)[:10])
	return "b-" + strings.TrimPrefix(m.ID, mailroom.PrefixMessage) + "-" + strings.ToLower(mac) + "@" + at
}

func failedDSN(rcpts ...string) *mailroom.Report {
	r := &mailroom.Report{Kind: mailroom.ReportDSN}
	for _, a := range rcpts {
		r.Recipients = append(r.Recipients, mailroom.ReportRecipient{FinalRecipient: a, Action: "failed", Status: "5.1.1",
			DiagnosticCode: "550 5.1.1 <" + a + ">: User unknown"})
	}
	return r
}

func abuseReport(m *mailroom.Message, rcpt string) *mailroom.Report {
	return &mailroom.Report{Kind: mailroom.ReportComplaint, FeedbackType: "abuse",
		OriginalMessageID: m.MessageIDHeader, OriginalRecipient: rcpt}
}

// reportSays applies each report to its address and checks each
// recipient's status after them, and that only the bounced or complained
// ones were suppressed.
func reportSays(t *testing.T, s mailroom.Store, rp *inbound.Reports, m *mailroom.Message, reports map[string][]*mailroom.Report, want map[string]mailroom.RecipientStatus) {
	t.Helper()
	ctx := context.Background()
	for to, rs := range reports {
		for _, r := range rs {
			if err := rp.Apply(ctx, to, r); err != nil {
				t.Fatal(err)
			}
		}
	}
	got, _ := messageOf(t, s, m.AccountID, m.ID)
	for _, r := range got.Recipients {
		w, ok := want[r.Address]
		if !ok {
			continue
		}
		if r.Status != w {
			t.Errorf("%s is %s, want %s", r.Address, r.Status, w)
		}
		_, err := s.Suppression(ctx, m.AccountID, r.Address)
		if suppressed := err == nil; suppressed != (w != mailroom.RecipientDelivered) {
			t.Errorf("%s (%s): suppressed %v (%v)", r.Address, w, suppressed, err)
		}
	}
}

// A recipient who reads the Return-Path of its copy cannot make a
// recipient at another domain bounced or complained: its token covers the
// recipients of its own transaction. The same token still bounces and
// reports them.
func testReportsTokenCoversItsTransactionOnly(t *testing.T, s mailroom.Store) {
	acme := NewAccount(t, s, "acme")
	rp, _ := reportsOn(s)
	const at = "bounces.one.test"
	delivered, bounced, complained := mailroom.RecipientDelivered, mailroom.RecipientBounced, mailroom.RecipientComplained

	// Two recipients at x.test share a transaction (and a token), the Cc
	// at y.test has its own.
	m := sentFrom(t, s, acme, "one.test", "a1@x.test", "a2@x.test", "b@y.test")
	xTok := tokenAt(rp, m, at, "a1@x.test", "a2@x.test")
	reportSays(t, s, rp, m, map[string][]*mailroom.Report{
		xTok: {failedDSN("b@y.test"), abuseReport(m, "b@y.test")},
	}, map[string]mailroom.RecipientStatus{"a1@x.test": delivered, "a2@x.test": delivered, "b@y.test": delivered})

	// One recipient at each domain: each token is its recipient's alone.
	m2 := sentFrom(t, s, acme, "one.test", "a@x.test", "c@y.test")
	aTok := tokenAt(rp, m2, at, "a@x.test")
	reportSays(t, s, rp, m2, map[string][]*mailroom.Report{
		aTok: {failedDSN("c@y.test"), abuseReport(m2, "c@y.test")},
	}, map[string]mailroom.RecipientStatus{"a@x.test": delivered, "c@y.test": delivered})

	// The legitimate reports: x.test's server bounces a2 (in a DSN that
	// also names b, which changes nothing), a complaint about a1 through
	// x.test's token, and y.test's server bounces b through its own.
	reportSays(t, s, rp, m, map[string][]*mailroom.Report{
		xTok:                           {failedDSN("A2@x.test", "b@y.test"), abuseReport(m, "a1@x.test")},
		tokenAt(rp, m, at, "b@y.test"): {failedDSN("b@y.test")},
	}, map[string]mailroom.RecipientStatus{"a1@x.test": complained, "a2@x.test": bounced, "b@y.test": bounced})
}

// A token is honoured only at the bounce subdomain it was minted for: the
// same local part at another account's bounce subdomain changes nothing.
func testReportsTokenOnlyAtItsBounceSubdomain(t *testing.T, s mailroom.Store) {
	ctx := context.Background()
	acme, globex := NewAccount(t, s, "acme"), NewAccount(t, s, "globex")
	for acct, name := range map[*mailroom.Account]string{acme: "one.test", globex: "two.test"} {
		d := NewDomain(acct, name, t0)
		d.Status = mailroom.DomainVerified // its return-path MX is published: the MX takes its bounces
		Try(0, s.CreateDomain(ctx, d, mailroom.DefaultMaxDomains)).Must(t)
	}
	rp, _ := reportsOn(s)
	delivered := mailroom.RecipientDelivered

	m := sentFrom(t, s, acme, "one.test", "ann@x.test", "bob@x.test", "carol@y.test")
	xTok := tokenAt(rp, m, "bounces.one.test", "ann@x.test", "bob@x.test")
	cTok := tokenAt(rp, m, "bounces.one.test", "carol@y.test")
	elsewhere := func(addr string) string { return strings.Replace(addr, "@bounces.one.test", "@bounces.two.test", 1) }
	if ok := Try(rp.Accepts(ctx, elsewhere(xTok))).Must(t); !ok {
		t.Fatal("the MX does not take mail for the other account's bounce subdomain; the test proves nothing")
	}
	reportSays(t, s, rp, m, map[string][]*mailroom.Report{
		elsewhere(xTok): {failedDSN("ann@x.test"), abuseReport(m, "bob@x.test")},
		elsewhere(cTok): {failedDSN("carol@y.test"), abuseReport(m, "carol@y.test")},
	}, map[string]mailroom.RecipientStatus{"ann@x.test": delivered, "bob@x.test": delivered, "carol@y.test": delivered})

	// At its own: the same reports apply.
	reportSays(t, s, rp, m, map[string][]*mailroom.Report{
		xTok: {failedDSN("ann@x.test"), abuseReport(m, "bob@x.test")},
		cTok: {failedDSN("carol@y.test")},
	}, map[string]mailroom.RecipientStatus{"ann@x.test": mailroom.RecipientBounced, "bob@x.test": mailroom.RecipientComplained,
		"carol@y.test": mailroom.RecipientBounced})
}

// Mail sent before the current form carries "b-<message>-<mac>": a
// one-recipient token still bounces its recipient, and a whole-message
// token the recipients of the one domain that had several; neither
// speaks for another recipient, nor at another bounce subdomain.
func testReportsLegacyTokens(t *testing.T, s mailroom.Store) {
	acme := NewAccount(t, s, "acme")
	rp, _ := reportsOn(s)
	const at, other = "bounces.one.test", "bounces.two.test"
	delivered, bounced, complained := mailroom.RecipientDelivered, mailroom.RecipientBounced, mailroom.RecipientComplained

	m := sentFrom(t, s, acme, "one.test", "a1@x.test", "a2@x.test", "b@y.test")
	whole, bTok := legacyTokenAt(rp, m, "", at), legacyTokenAt(rp, m, "b@y.test", at)
	// The forgeries: x.test's whole-message token naming b, and b's own
	// token at another bounce subdomain.
	reportSays(t, s, rp, m, map[string][]*mailroom.Report{
		whole:                                   {failedDSN("b@y.test"), abuseReport(m, "b@y.test")},
		legacyTokenAt(rp, m, "b@y.test", other): {failedDSN("b@y.test")},
		legacyTokenAt(rp, m, "", other):         {failedDSN("a1@x.test")},
	}, map[string]mailroom.RecipientStatus{"a1@x.test": delivered, "a2@x.test": delivered, "b@y.test": delivered})
	// The legitimate ones still apply.
	reportSays(t, s, rp, m, map[string][]*mailroom.Report{
		whole: {failedDSN("a2@x.test"), abuseReport(m, "a1@x.test")},
		bTok:  {failedDSN("b@y.test")},
	}, map[string]mailroom.RecipientStatus{"a1@x.test": complained, "a2@x.test": bounced, "b@y.test": bounced})

	// Two domains with two recipients each received the same whole-message
	// token: it can speak for neither. Their one-recipient tokens (a
	// marketing message's copies) still can.
	m2 := sentFrom(t, s, acme, "one.test", "c1@x.test", "c2@x.test", "d1@y.test", "d2@y.test")
	reportSays(t, s, rp, m2, map[string][]*mailroom.Report{
		legacyTokenAt(rp, m2, "", at): {failedDSN("c1@x.test", "d1@y.test")},
	}, map[string]mailroom.RecipientStatus{"c1@x.test": delivered, "d1@y.test": delivered})
	reportSays(t, s, rp, m2, map[string][]*mailroom.Report{
		legacyTokenAt(rp, m2, "d2@y.test", at): {failedDSN("d2@y.test")},
	}, map[string]mailroom.RecipientStatus{"c1@x.test": delivered, "d1@y.test": delivered, "d2@y.test": bounced})
}
