package storetest

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/mailroom/mailroom"
	"github.com/mailroom/mailroom/unsubscribe"
)

func init() {
	extraSuites = append(extraSuites,
		suite{"UnsubscribeStopsMarketingOnly", testUnsubscribeStopsMarketingOnly},
		suite{"UnsubscribeStopsScheduledMarketingOnly", testUnsubscribeStopsScheduledMarketingOnly},
		suite{"UnsubscribeGivesWay", testUnsubscribeGivesWay},
		suite{"UnsubscribeService", testUnsubscribeService},
	)
}

func marketing(m *mailroom.Message) *mailroom.Message {
	m.Category = mailroom.CategoryMarketing
	return m
}

// An unsubscribe stops marketing mail at accept, whatever the address's
// case; transactional mail to the address is queued. Other reasons stop
// both.
func testUnsubscribeStopsMarketingOnly(t *testing.T, s mailroom.Store) {
	ctx := context.Background()
	acct := NewAccount(t, s, "acme")
	Try(s.AddSuppression(ctx, &mailroom.Suppression{AccountID: acct.ID, Address: "ann@x.example",
		Reason: mailroom.SuppressedUnsubscribe, CreatedAt: t0})).Must(t)
	Try(s.AddSuppression(ctx, &mailroom.Suppression{AccountID: acct.ID, Address: "gone@x.example",
		Reason: mailroom.SuppressedHardBounce, CreatedAt: t0})).Must(t)

	news := marketing(NewMessage(acct, t0, "ANN@x.example", "bob@x.example", "gone@x.example"))
	accept(t, s, news, mailroom.MessageQueued)
	wantMessage(t, s, acct, news.ID, mailroom.MessageQueued, map[string]mailroom.RecipientStatus{
		"ANN@x.example": mailroom.RecipientSuppressed, "bob@x.example": mailroom.RecipientQueued, "gone@x.example": mailroom.RecipientSuppressed})
	receipt := NewMessage(acct, t0, "Ann@X.example", "gone@x.example")
	accept(t, s, receipt, mailroom.MessageQueued)
	wantMessage(t, s, acct, receipt.ID, mailroom.MessageQueued, map[string]mailroom.RecipientStatus{
		"Ann@X.example": mailroom.RecipientQueued, "gone@x.example": mailroom.RecipientSuppressed})
	only := marketing(NewMessage(acct, t0, "ann@x.example"))
	accept(t, s, only, mailroom.MessageSuppressed)

	// The batch path too.
	out := acceptAll(t, s, []*mailroom.Message{marketing(NewMessage(acct, t0, "ann@x.example")), NewMessage(acct, t0, "ann@x.example")})
	if out[0].Result.Status != mailroom.MessageSuppressed || out[1].Result.Status != mailroom.MessageQueued {
		t.Fatalf("batch: marketing %s, transactional %s", out[0].Result.Status, out[1].Result.Status)
	}
}

// A scheduled send is checked again when it starts: an address that
// unsubscribed meanwhile is suppressed in the marketing message and
// queued in the transactional one.
func testUnsubscribeStopsScheduledMarketingOnly(t *testing.T, s mailroom.Store) {
	ctx := context.Background()
	acct := NewAccount(t, s, "acme")
	sendingDomain(t, s, acct, "shop.example", mailroom.DomainVerified)
	at := t0.Add(time.Hour)
	news := marketing(newScheduledMessage(acct, at, "ann@x.example", "bob@x.example"))
	receipt := newScheduledMessage(acct, at, "ann@x.example")
	accept(t, s, news, mailroom.MessageScheduled)
	accept(t, s, receipt, mailroom.MessageScheduled)
	Try(s.AddSuppression(ctx, &mailroom.Suppression{AccountID: acct.ID, Address: "Ann@X.example",
		Reason: mailroom.SuppressedUnsubscribe, MessageID: news.ID, CreatedAt: t0.Add(time.Minute)})).Must(t)

	q := claimAt(t, s, "node_a", at)
	if got := addresses(of(q, news.ID)); !slices.Equal(got, []string{"bob@x.example"}) {
		t.Fatalf("claimed %v of the marketing message, want bob only", got)
	}
	if got := addresses(of(q, receipt.ID)); !slices.Equal(got, []string{"ann@x.example"}) {
		t.Fatalf("claimed %v of the transactional message, want ann", got)
	}
	_, events := wantMessage(t, s, acct, news.ID, mailroom.MessageQueued, map[string]mailroom.RecipientStatus{
		"ann@x.example": mailroom.RecipientSuppressed, "bob@x.example": mailroom.RecipientQueued})
	if tl := timeline(events, "ann@x.example"); !slices.Equal(tl, []string{mailroom.EventEmailScheduled, mailroom.EventEmailSuppressed}) {
		t.Fatalf("unsubscribed recipient's timeline %v", tl)
	}
	wantMessage(t, s, acct, receipt.ID, mailroom.MessageQueued, map[string]mailroom.RecipientStatus{"ann@x.example": mailroom.RecipientQueued})
}

// An unsubscribe is the one entry another reason replaces: a hard bounce,
// a complaint or a manual entry afterwards stops all mail. Any other
// entry stays what it was, an unsubscribe added after it too.
func testUnsubscribeGivesWay(t *testing.T, s mailroom.Store) {
	ctx := context.Background()
	acct := NewAccount(t, s, "acme")
	add := func(addr string, r mailroom.SuppressionReason, msg string, at time.Time) *mailroom.Suppression {
		t.Helper()
		return Try(s.AddSuppression(ctx, &mailroom.Suppression{AccountID: acct.ID, Address: addr, Reason: r, MessageID: msg, CreatedAt: at})).Must(t)
	}
	m1, m2 := mailroom.NewID(mailroom.PrefixMessage, t0), mailroom.NewID(mailroom.PrefixMessage, t0.Add(time.Second))
	first := add("ann@x.example", mailroom.SuppressedUnsubscribe, m1, t0)
	if again := add("ANN@x.example", mailroom.SuppressedUnsubscribe, m2, t0.Add(time.Minute)); *again != *first {
		t.Fatalf("a second unsubscribe changed the entry: %+v, was %+v", again, first)
	}
	for _, r := range []mailroom.SuppressionReason{mailroom.SuppressedHardBounce, mailroom.SuppressedComplaint, mailroom.SuppressedManual} {
		addr := string(r) + "@x.example"
		add(addr, mailroom.SuppressedUnsubscribe, m1, t0)
		got := add(addr, r, m2, t0.Add(time.Hour))
		want := mailroom.Suppression{AccountID: acct.ID, Address: addr, Reason: r, MessageID: m2, CreatedAt: t0.Add(time.Hour)}
		if *got != want {
			t.Fatalf("%s after an unsubscribe: %+v, want %+v", r, got, want)
		}
		if got := add(addr, mailroom.SuppressedUnsubscribe, m1, t0.Add(2*time.Hour)); got.Reason != r || got.MessageID != m2 {
			t.Fatalf("an unsubscribe replaced %s: %+v", r, got)
		}
		if sup := Try(s.Suppression(ctx, acct.ID, addr)).Must(t); sup.Reason != r {
			t.Fatalf("stored %+v", sup)
		}
	}
	// Replaced in the list, which is ordered by the entry's time.
	list, _ := Try2(s.ListSuppressions(ctx, acct.ID, mailroom.Page{Limit: 10})).Must(t)
	if len(list) != 4 || list[len(list)-1].Address != "ann@x.example" {
		t.Fatalf("list %+v", list)
	}
}

// unsubscribe.Service over storage: a token suppresses its address
// with reason unsubscribe and the message it came from, once; a second
// use changes nothing; a token under another key changes nothing.
func testUnsubscribeService(t *testing.T, s mailroom.Store) {
	ctx := context.Background()
	acct := NewAccount(t, s, "acme")
	m := marketing(NewMessage(acct, t0, "Ann@x.example"))
	accept(t, s, m, mailroom.MessageQueued)
	clock := t0.Add(time.Hour)
	svc := &unsubscribe.Service{Tokens: unsubscribe.Tokens{Key: []byte("k")}, Store: s, Now: func() time.Time { return clock }}
	tok := Try(svc.Tokens.Token(mailroom.Unsubscribe{AccountID: acct.ID, MessageID: m.ID, Address: "Ann@x.example"})).Must(t)

	u := Try(svc.Unsubscribe(ctx, tok)).Must(t)
	if u.Address != "Ann@x.example" || u.MessageID != m.ID || u.AccountID != acct.ID {
		t.Fatalf("unsubscribed %+v", u)
	}
	want := mailroom.Suppression{AccountID: acct.ID, Address: "ann@x.example", Reason: mailroom.SuppressedUnsubscribe, MessageID: m.ID, CreatedAt: clock}
	if sup := Try(s.Suppression(ctx, acct.ID, "ann@x.example")).Must(t); *sup != want {
		t.Fatalf("entry %+v, want %+v", sup, want)
	}
	clock = clock.Add(time.Hour)
	Try(svc.Unsubscribe(ctx, tok)).Must(t)
	if sup := Try(s.Suppression(ctx, acct.ID, "ann@x.example")).Must(t); *sup != want {
		t.Fatalf("a second unsubscribe changed the entry: %+v", sup)
	}
	forged := Try((unsubscribe.Tokens{Key: []byte("other")}).Token(mailroom.Unsubscribe{AccountID: acct.ID, MessageID: m.ID, Address: "bob@x.example"})).Must(t)
	if _, err := svc.Unsubscribe(ctx, forged); !mailroom.IsCode(err, mailroom.ECodeNotFound) {
		t.Fatalf("a forged token: %v", err)
	}
	wantCode(t, func() error { _, err := s.Suppression(ctx, acct.ID, "bob@x.example"); return err }(), mailroom.ECodeNotFound)

	// By mail: the local part names the message and its recipient.
	local := Try(svc.Tokens.LocalPart(mailroom.Unsubscribe{AccountID: acct.ID, MessageID: m.ID, Address: "Ann@x.example"})).Must(t)
	if err := s.DeleteSuppression(ctx, acct.ID, "ann@x.example"); err != nil {
		t.Fatal(err)
	}
	if u, ok, err := svc.UnsubscribeByMail(ctx, local); err != nil || !ok || u.Address != "Ann@x.example" {
		t.Fatalf("by mail: %+v %v %v", u, ok, err)
	}
	if sup := Try(s.Suppression(ctx, acct.ID, "ann@x.example")).Must(t); sup.Reason != mailroom.SuppressedUnsubscribe {
		t.Fatalf("by mail: entry %+v", sup)
	}
	if _, ok, err := svc.UnsubscribeByMail(ctx, "unsubscribe-"+mailroom.NewID("", t0)+"-aaaaaaaaaaaaaaaa"); ok || err != nil {
		t.Fatalf("an unknown message's local part: %v %v", ok, err)
	}
}
