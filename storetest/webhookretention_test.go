package storetest

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/mailroom/mailroom"
	"github.com/mailroom/mailroom/retention"
)

func init() {
	extraSuites = append(extraSuites, suite{"WebhookRetention", testWebhookRetention})
}

func testWebhookRetention(t *testing.T, s mailroom.Store) {
	ctx := context.Background()
	acme, globex := NewAccount(t, s, "acme"), NewAccount(t, s, "globex")
	hook := addWebhook(t, s, acme, mailroom.AllEventTypes)
	dom := NewDomain(acme, "shop.example", t0)
	if err := s.CreateDomain(ctx, dom, mailroom.DefaultMaxDomains); err != nil {
		t.Fatal(err)
	}
	cutoff := t0.Add(5 * 24 * time.Hour)
	late := t0.Add(10 * 24 * time.Hour)

	// Old: a domain event with a delivery still pending and a failed
	// attempt; a message's event delivered (an attempt).
	old := domainEvent(t, s, dom, mailroom.EventDomainVerified, t0)
	m := NewMessage(acme, t0, "a@x.example")
	Try(s.AcceptMessage(ctx, m)).Must(t)
	retry := t0.Add(time.Hour)
	for _, d := range claimHooks(t, s, t0) {
		if d.Event.ID == old.ID {
			record(t, s, never, outcome(d, 1, 500, t0.Add(time.Second), &retry))
		} else {
			record(t, s, never, outcome(d, 1, 200, t0.Add(time.Second), nil))
		}
	}
	// New: a domain event with a failed attempt, and a replay of the old
	// event.
	fresh := domainEvent(t, s, dom, mailroom.EventDomainFailed, late)
	retryFresh := late.Add(time.Hour)
	for _, d := range claimHooks(t, s, late) {
		if d.Event.ID == fresh.ID {
			record(t, s, never, outcome(d, 1, 500, late.Add(time.Second), &retryFresh))
		}
	}
	if err := s.AddWebhookDeliveries(ctx, acme.ID, old.ID, []string{hook.ID}, late); err != nil {
		t.Fatal(err)
	}
	if n := backlog(t, s); n != 3 {
		t.Fatalf("%d deliveries pending before retention, want 3", n)
	}

	// The old domain event, the two old attempts, the old delivery.
	if n := Try(s.DeleteExpiredWebhookData(ctx, cutoff, 100)).Must(t); n != 4 {
		t.Fatalf("retention removed %d rows, want 4", n)
	}
	_, err := s.Event(ctx, acme.ID, old.ID)
	wantCode(t, err, mailroom.ECodeNotFound)
	if got := eventsWhere(t, s, acme.ID, mailroom.EventFilter{}); len(got) != 2 || got[0] != fresh.ID {
		t.Fatalf("after retention, events %v, want the new one and the message's", got)
	}
	if _, events := messageOf(t, s, acme.ID, m.ID); len(events) != 1 {
		t.Fatalf("retention of webhook data took the message's timeline: %d events", len(events))
	}
	attempts := allAttempts(t, s, acme.ID, hook.ID, mailroom.WebhookAttemptFilter{})
	if len(attempts) != 1 || attempts[0].EventID != fresh.ID {
		t.Fatalf("after retention, %d attempts, want the new one", len(attempts))
	}
	if n, oldest := backlogOf(t, s); n != 2 || !oldest.Equal(late) {
		t.Fatalf("after retention, backlog %d, oldest %v; want 2, %v", n, oldest, late)
	}
	// The replay of an expired event is dropped, not delivered empty.
	got := claimHooks(t, s, retryFresh)
	if len(got) != 1 || got[0].Event.ID != fresh.ID {
		t.Fatalf("claimed %d deliveries, want the new event's alone", len(got))
	}
	if n := backlog(t, s); n != 1 {
		t.Fatalf("the replay of an expired event is still pending (%d)", n)
	}
	if n := Try(s.DeleteExpiredWebhookData(ctx, cutoff, 100)).Must(t); n != 0 {
		t.Fatalf("a second pass removed %d rows", n)
	}

	// At most limit of each, oldest first.
	gdom := NewDomain(globex, "globex.example", t0)
	if err := s.CreateDomain(ctx, gdom, mailroom.DefaultMaxDomains); err != nil {
		t.Fatal(err)
	}
	var olds []string
	for i := range 3 {
		olds = append(olds, domainEvent(t, s, gdom, mailroom.EventDomainFailed, t0.Add(time.Duration(i)*time.Second)).ID)
	}
	if n := Try(s.DeleteExpiredWebhookData(ctx, cutoff, 2)).Must(t); n != 2 {
		t.Fatalf("with limit 2, removed %d", n)
	}
	if left := eventsWhere(t, s, globex.ID, mailroom.EventFilter{Type: mailroom.EventDomainFailed}); !slices.Equal(left, olds[2:]) {
		t.Fatalf("left %v, want the newest %v", left, olds[2:])
	}
	if n := Try(s.DeleteExpiredWebhookData(ctx, cutoff, 2)).Must(t); n != 1 {
		t.Fatalf("the next pass removed %d, want 1", n)
	}

	// The retention service that serve runs takes the webhook log too,
	// every page of it.
	for i := range 1200 {
		domainEvent(t, s, gdom, mailroom.EventDomainFailed, t0.Add(time.Duration(i)*time.Millisecond))
	}
	r := &retention.Sweeper{Store: s, Webhooks: s, Period: late.Sub(cutoff), Now: func() time.Time { return late }}
	if n, err := r.RunOnce(ctx); err != nil || n < 1200 {
		t.Fatalf("retention removed %d rows (%v), want the 1,200 old events at least", n, err)
	}
	if left := eventsWhere(t, s, globex.ID, mailroom.EventFilter{}); len(left) != 0 {
		t.Fatalf("retention left %d old events", len(left))
	}
}
