package storetest

import (
	"bytes"
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mailroom/mailroom"
)

// Webhook endpoints and the fan-out of events into their outbox (the
// deliveries' claims and outcomes are in webhookoutbox.go, the lists and
// retention in webhookevents.go).

func init() {
	extraSuites = append(extraSuites,
		suite{"WebhookEndpoints", testWebhookEndpoints},
		suite{"WebhookEndpointLimit", testWebhookEndpointLimit},
		suite{"WebhookUpdate", testWebhookUpdate},
		suite{"WebhookDeleteTakesDeliveriesAndAttempts", testWebhookDelete},
		suite{"WebhookFanOut", testWebhookFanOut},
		suite{"WebhookTestEventOnlyWhereNamed", testWebhookTestEvent},
		suite{"WebhookFanOutRolledBack", testWebhookFanOutRolledBack},
		suite{"WebhookReplay", testWebhookReplay},
		suite{"WebhookReplayOfAnotherAccountsEvent", testWebhookReplayForeignEvent},
		suite{"WebhookInsertEventFor", testWebhookInsertEventFor},
	)
}

// never is a disableBefore that disables no endpoint.
var never = t0.AddDate(-1, 0, 0)

// newWebhook returns an unsaved enabled endpoint of acct created at at and
// subscribed to events.
func newWebhook(acct *mailroom.Account, at time.Time, events ...string) *mailroom.WebhookEndpoint {
	id := mailroom.NewID(mailroom.PrefixWebhook, at)
	return &mailroom.WebhookEndpoint{ID: id, AccountID: acct.ID, URL: "https://hooks.example/" + id,
		Description: "receiver " + id, Events: events, Enabled: true, SecretSealed: []byte("sealed " + id),
		CreatedAt: at, UpdatedAt: at}
}

// addWebhook stores an enabled endpoint of acct subscribed to events.
func addWebhook(t *testing.T, s mailroom.Store, acct *mailroom.Account, events ...string) *mailroom.WebhookEndpoint {
	t.Helper()
	e := newWebhook(acct, t0, events...)
	if err := s.CreateWebhook(context.Background(), e, mailroom.DefaultMaxWebhooks); err != nil {
		t.Fatalf("create webhook: %v", err)
	}
	return e
}

// claimHooks claims every delivery due at now for node_a, under a minute's
// lease.
func claimHooks(t *testing.T, s mailroom.Store, now time.Time) []*mailroom.WebhookDelivery {
	t.Helper()
	return Try(s.ClaimWebhookDeliveries(context.Background(), mailroom.WebhookClaim{
		Node: "node_a", Now: now, Lease: time.Minute, Limit: 1000})).Must(t)
}

// byEndpoint groups deliveries by their endpoint.
func byEndpoint(ds []*mailroom.WebhookDelivery) map[string][]*mailroom.WebhookDelivery {
	out := map[string][]*mailroom.WebhookDelivery{}
	for _, d := range ds {
		out[d.EndpointID] = append(out[d.EndpointID], d)
	}
	return out
}

// eventIDs are the sorted event ids of deliveries.
func eventIDs(ds []*mailroom.WebhookDelivery) []string {
	var ids []string
	for _, d := range ds {
		ids = append(ids, d.Event.ID)
	}
	slices.Sort(ids)
	return ids
}

// backlog is the number of pending deliveries.
func backlog(t *testing.T, s mailroom.Store) int {
	t.Helper()
	n, _ := backlogOf(t, s)
	return n
}

// queueTo stores a webhook.test event of acct made at at, with a delivery
// to each endpoint (due at at), and returns it.
func queueTo(t *testing.T, s mailroom.Store, acct *mailroom.Account, at time.Time, endpoints ...*mailroom.WebhookEndpoint) *mailroom.Event {
	t.Helper()
	ev := Try(mailroom.NewEvent(acct.ID, mailroom.EventWebhookTest, map[string]string{"message": "test"}, at)).Must(t)
	var ids []string
	for _, e := range endpoints {
		ids = append(ids, e.ID)
	}
	if err := s.InsertEventFor(context.Background(), ev, ids); err != nil {
		t.Fatalf("insert event for %v: %v", ids, err)
	}
	return ev
}

// domainEvent stores an event of type typ made at at through a domain
// check of d: the path of a single event with its fan-out.
func domainEvent(t *testing.T, s mailroom.Store, d *mailroom.Domain, typ string, at time.Time) *mailroom.Event {
	t.Helper()
	ev := Try(mailroom.NewEvent(d.AccountID, typ, map[string]string{"domain": d.Name}, at)).Must(t)
	if err := s.SaveDomainCheck(context.Background(), d, ev); err != nil {
		t.Fatalf("save domain check: %v", err)
	}
	return ev
}

func sameWebhook(t *testing.T, got, want *mailroom.WebhookEndpoint) {
	t.Helper()
	if got.ID != want.ID || got.AccountID != want.AccountID || got.URL != want.URL || got.Description != want.Description ||
		!slices.Equal(got.Events, want.Events) || got.Enabled != want.Enabled || got.DisabledReason != want.DisabledReason ||
		!bytes.Equal(got.SecretSealed, want.SecretSealed) || !bytes.Equal(got.PreviousSecretSealed, want.PreviousSecretSealed) ||
		!sameTime(got.PreviousSecretUntil, want.PreviousSecretUntil) || !sameTime(got.FailingSince, want.FailingSince) ||
		!got.CreatedAt.Equal(want.CreatedAt) || !got.UpdatedAt.Equal(want.UpdatedAt) {
		t.Fatalf("stored webhook differs:\n got %+v\nwant %+v", got, want)
	}
}

func testWebhookEndpoints(t *testing.T, s mailroom.Store) {
	ctx := context.Background()
	acme, globex := NewAccount(t, s, "acme"), NewAccount(t, s, "globex")
	var made []*mailroom.WebhookEndpoint
	for i := range 5 {
		// Two endpoints share each creation time: ties must page too.
		e := newWebhook(acme, t0.Add(time.Duration(i/2)*time.Second), mailroom.EventEmailDelivered, mailroom.EventEmailBounced)
		if err := s.CreateWebhook(ctx, e, mailroom.DefaultMaxWebhooks); err != nil {
			t.Fatal(err)
		}
		made = append(made, e)
	}
	theirs := addWebhook(t, s, globex, mailroom.AllEventTypes)

	sameWebhook(t, Try(s.Webhook(ctx, acme.ID, made[0].ID)).Must(t), made[0])
	_, err := s.Webhook(ctx, acme.ID, "wh_unknown")
	wantCode(t, err, mailroom.ECodeNotFound)

	// Newest first, ties by id, three pages of two.
	want := slices.Clone(made)
	slices.SortFunc(want, func(a, b *mailroom.WebhookEndpoint) int {
		if c := b.CreatedAt.Compare(a.CreatedAt); c != 0 {
			return c
		}
		return strings.Compare(b.ID, a.ID)
	})
	var got []string
	cursor, pages := "", 0
	for {
		page, next := Try2(s.ListWebhooks(ctx, acme.ID, mailroom.Page{Limit: 2, Cursor: cursor})).Must(t)
		pages++
		for _, e := range page {
			got = append(got, e.ID)
		}
		if next == "" {
			break
		}
		cursor = next
	}
	var wantIDs []string
	for _, e := range want {
		wantIDs = append(wantIDs, e.ID)
	}
	if pages != 3 || !slices.Equal(got, wantIDs) {
		t.Fatalf("listed %v in %d pages, want %v in 3", got, pages, wantIDs)
	}
	_, _, err = s.ListWebhooks(ctx, acme.ID, mailroom.Page{Cursor: "not-a-cursor!"})
	wantCode(t, err, mailroom.ECodeValidation)

	// Another account can neither see, change nor delete acme's endpoint.
	_, err = s.Webhook(ctx, globex.ID, made[0].ID)
	wantCode(t, err, mailroom.ECodeNotFound)
	evil, off := "https://evil.example/", false
	_, err = s.UpdateWebhook(ctx, globex.ID, made[0].ID, mailroom.WebhookChange{URL: &evil, Enabled: &off}, t0)
	wantCode(t, err, mailroom.ECodeNotFound)
	_, err = s.RotateWebhookSecret(ctx, globex.ID, made[0].ID, []byte("stolen"), t0, t0)
	wantCode(t, err, mailroom.ECodeNotFound)
	wantCode(t, s.DeleteWebhook(ctx, globex.ID, made[0].ID), mailroom.ECodeNotFound)
	sameWebhook(t, Try(s.Webhook(ctx, acme.ID, made[0].ID)).Must(t), made[0])
	if list, _ := Try2(s.ListWebhooks(ctx, globex.ID, mailroom.Page{})).Must(t); len(list) != 1 || list[0].ID != theirs.ID {
		t.Fatalf("globex lists %d endpoints, want only its own", len(list))
	}
}

func testWebhookEndpointLimit(t *testing.T, s mailroom.Store) {
	ctx := context.Background()
	acme, globex := NewAccount(t, s, "acme"), NewAccount(t, s, "globex")
	first, second := newWebhook(acme, t0, "*"), newWebhook(acme, t0, "*")
	for _, e := range []*mailroom.WebhookEndpoint{first, second} {
		if err := s.CreateWebhook(ctx, e, 2); err != nil {
			t.Fatal(err)
		}
	}
	third := newWebhook(acme, t0, "*")
	wantCode(t, s.CreateWebhook(ctx, third, 2), mailroom.ECodeValidation)
	_, err := s.Webhook(ctx, acme.ID, third.ID)
	wantCode(t, err, mailroom.ECodeNotFound)
	// The limit is per account.
	if err := s.CreateWebhook(ctx, newWebhook(globex, t0, "*"), 2); err != nil {
		t.Fatalf("another account's endpoints counted against globex: %v", err)
	}
	// Deleting one makes room.
	if err := s.DeleteWebhook(ctx, acme.ID, first.ID); err != nil {
		t.Fatal(err)
	}
	if err := s.CreateWebhook(ctx, third, 2); err != nil {
		t.Fatalf("after a delete: %v", err)
	}
}

func testWebhookUpdate(t *testing.T, s mailroom.Store) {
	ctx := context.Background()
	acme, globex := NewAccount(t, s, "acme"), NewAccount(t, s, "globex")
	e := addWebhook(t, s, acme, mailroom.EventEmailDelivered)
	Try(s.AcceptMessage(ctx, NewMessage(acme, t0, "a@x.example"))).Must(t)
	if n := backlog(t, s); n != 0 {
		t.Fatalf("an endpoint subscribed to email.delivered got %d deliveries of email.queued", n)
	}

	// Every field a PATCH gives persists; the others keep their values;
	// and the subscription decides the fan-out.
	url, description := "https://new.example/hook", "renamed"
	updated := Try(s.UpdateWebhook(ctx, acme.ID, e.ID, mailroom.WebhookChange{URL: &url, Description: &description,
		Events: []string{mailroom.EventEmailQueued}}, t0.Add(2*time.Hour))).Must(t)
	e.URL, e.Description, e.Events, e.UpdatedAt = url, description, []string{mailroom.EventEmailQueued}, t0.Add(2*time.Hour)
	sameWebhook(t, updated, e)
	sameWebhook(t, Try(s.Webhook(ctx, acme.ID, e.ID)).Must(t), e)
	m := NewMessage(acme, t0, "b@x.example")
	Try(s.AcceptMessage(ctx, m)).Must(t)
	if n := backlog(t, s); n != 1 {
		t.Fatalf("after subscribing to email.queued, %d deliveries pending, want 1", n)
	}

	// A rotation keeps the old secret as the previous one.
	until := t0.Add(26 * time.Hour)
	rotated := Try(s.RotateWebhookSecret(ctx, acme.ID, e.ID, []byte("rotated"), until, t0.Add(2*time.Hour))).Must(t)
	if string(rotated.SecretSealed) != "rotated" || string(rotated.PreviousSecretSealed) != string(e.SecretSealed) ||
		rotated.PreviousSecretUntil == nil || !rotated.PreviousSecretUntil.Equal(until) {
		t.Fatalf("after a rotation: secret %q, previous %q until %v", rotated.SecretSealed, rotated.PreviousSecretSealed, rotated.PreviousSecretUntil)
	}
	e.PreviousSecretSealed, e.SecretSealed, e.PreviousSecretUntil = e.SecretSealed, []byte("rotated"), &until

	// Turned off: its pending delivery is dropped, and what happens while
	// it is off is not delivered later.
	off, on := false, true
	got0 := Try(s.UpdateWebhook(ctx, acme.ID, e.ID, mailroom.WebhookChange{Enabled: &off, DisabledReason: "turned off through the API"}, t0.Add(3*time.Hour))).Must(t)
	e.Enabled, e.DisabledReason, e.UpdatedAt = false, "turned off through the API", t0.Add(3*time.Hour)
	sameWebhook(t, got0, e)
	if n := backlog(t, s); n != 0 {
		t.Fatalf("turning the endpoint off left %d deliveries", n)
	}
	Try(s.AcceptMessage(ctx, NewMessage(acme, t0, "c@x.example"))).Must(t)
	back := Try(s.UpdateWebhook(ctx, acme.ID, e.ID, mailroom.WebhookChange{Enabled: &on}, t0.Add(4*time.Hour))).Must(t)
	if !back.Enabled || back.DisabledReason != "" {
		t.Fatalf("turned on: enabled %v, reason %q", back.Enabled, back.DisabledReason)
	}
	if got := claimHooks(t, s, t0.Add(4*time.Hour)); len(got) != 0 {
		t.Fatalf("%d deliveries of the time the endpoint was off came after it was turned on", len(got))
	}
	later := NewMessage(acme, t0.Add(5*time.Hour), "d@x.example")
	Try(s.AcceptMessage(ctx, later)).Must(t)
	got := claimHooks(t, s, t0.Add(5*time.Hour))
	if len(got) != 1 || got[0].Event.MessageID != later.ID {
		t.Fatalf("after turning it on again, got %d deliveries, want the new message's", len(got))
	}

	// A PATCH of other fields keeps what the dispatcher wrote meanwhile:
	// the failing time, and an automatic disable.
	retry := t0.Add(6 * time.Hour)
	record(t, s, never, outcome(got[0], 1, 500, t0.Add(5*time.Hour), &retry))
	renamed := "renamed again"
	kept := Try(s.UpdateWebhook(ctx, acme.ID, e.ID, mailroom.WebhookChange{Description: &renamed}, t0.Add(5*time.Hour))).Must(t)
	if kept.FailingSince == nil || !kept.FailingSince.Equal(t0.Add(5*time.Hour)) {
		t.Fatalf("a PATCH of the description lost the failing time: %v", kept.FailingSince)
	}
	// Enabling an enabled endpoint is no change: its failing time stays.
	if again := Try(s.UpdateWebhook(ctx, acme.ID, e.ID, mailroom.WebhookChange{Enabled: &on}, t0.Add(5*time.Hour))).Must(t); again.FailingSince == nil {
		t.Fatal("enabling an enabled endpoint cleared its failing time")
	}

	// Another account's update changes nothing.
	evil := "https://evil.example/"
	_, err := s.UpdateWebhook(ctx, globex.ID, e.ID, mailroom.WebhookChange{URL: &evil}, t0)
	wantCode(t, err, mailroom.ECodeNotFound)
	if now := Try(s.Webhook(ctx, acme.ID, e.ID)).Must(t); now.URL != url {
		t.Fatalf("another account's update changed the URL to %s", now.URL)
	}
	_, err = s.UpdateWebhook(ctx, acme.ID, "wh_unknown", mailroom.WebhookChange{URL: &evil}, t0)
	wantCode(t, err, mailroom.ECodeNotFound)
}

func testWebhookDelete(t *testing.T, s mailroom.Store) {
	ctx := context.Background()
	acme, globex := NewAccount(t, s, "acme"), NewAccount(t, s, "globex")
	gone, kept := addWebhook(t, s, acme, "*"), addWebhook(t, s, acme, "*")
	acceptAll(t, s, []*mailroom.Message{NewMessage(acme, t0, "a@x.example"), NewMessage(acme, t0, "b@x.example")})
	claimed := byEndpoint(claimHooks(t, s, t0))
	if len(claimed[gone.ID]) != 2 || len(claimed[kept.ID]) != 2 {
		t.Fatalf("claimed %d and %d, want 2 each", len(claimed[gone.ID]), len(claimed[kept.ID]))
	}
	// One of gone's deliveries fails (and waits for a retry), the other
	// succeeds; kept's fail too.
	retry := t0.Add(time.Hour)
	record(t, s, never,
		outcome(claimed[gone.ID][0], 1, 500, t0.Add(time.Second), &retry),
		outcome(claimed[gone.ID][1], 1, 200, t0.Add(time.Second), nil),
		outcome(claimed[kept.ID][0], 1, 500, t0.Add(time.Second), &retry),
		outcome(claimed[kept.ID][1], 1, 500, t0.Add(time.Second), &retry))
	if n := backlog(t, s); n != 3 {
		t.Fatalf("%d deliveries pending, want 3", n)
	}

	wantCode(t, s.DeleteWebhook(ctx, globex.ID, gone.ID), mailroom.ECodeNotFound)
	if n := backlog(t, s); n != 3 {
		t.Fatalf("another account's delete removed deliveries: %d pending", n)
	}
	if err := s.DeleteWebhook(ctx, acme.ID, gone.ID); err != nil {
		t.Fatal(err)
	}
	_, err := s.Webhook(ctx, acme.ID, gone.ID)
	wantCode(t, err, mailroom.ECodeNotFound)
	wantCode(t, s.DeleteWebhook(ctx, acme.ID, gone.ID), mailroom.ECodeNotFound)
	if n := backlog(t, s); n != 2 {
		t.Fatalf("after the delete, %d deliveries pending, want kept's 2", n)
	}
	if got := allAttempts(t, s, acme.ID, gone.ID, mailroom.WebhookAttemptFilter{}); len(got) != 0 {
		t.Fatalf("the deleted endpoint still lists %d attempts", len(got))
	}
	if got := allAttempts(t, s, acme.ID, kept.ID, mailroom.WebhookAttemptFilter{}); len(got) != 2 {
		t.Fatalf("the other endpoint lists %d attempts, want 2", len(got))
	}
	for _, d := range claimHooks(t, s, retry) {
		if d.EndpointID != kept.ID {
			t.Fatalf("a delivery to the deleted endpoint was claimed: %+v", d)
		}
	}
}

func testWebhookFanOut(t *testing.T, s mailroom.Store) {
	ctx := context.Background()
	acme, globex := NewAccount(t, s, "acme"), NewAccount(t, s, "globex")
	queued := addWebhook(t, s, acme, mailroom.EventEmailQueued)
	star := addWebhook(t, s, acme, mailroom.AllEventTypes)
	delivered := addWebhook(t, s, acme, mailroom.EventEmailDelivered)
	domains := addWebhook(t, s, acme, mailroom.EventDomainVerified)
	off := newWebhook(acme, t0, mailroom.AllEventTypes)
	off.Enabled, off.DisabledReason = false, "turned off through the API"
	if err := s.CreateWebhook(ctx, off, mailroom.DefaultMaxWebhooks); err != nil {
		t.Fatal(err)
	}
	theirs := addWebhook(t, s, globex, mailroom.AllEventTypes)

	// One accept of both accounts' messages: three acme events, one of
	// globex.
	m1, m2 := NewMessage(acme, t0, "a@x.example"), NewMessage(acme, t0, "b@x.example", "c@x.example")
	g := NewMessage(globex, t0, "d@x.example")
	acceptAll(t, s, []*mailroom.Message{m1, g, m2})
	var acmeEvents []string
	for _, e := range allEvents(t, s, acme.ID) {
		acmeEvents = append(acmeEvents, e.ID)
	}
	slices.Sort(acmeEvents)
	globexEvents := allEvents(t, s, globex.ID)
	if len(acmeEvents) != 3 || len(globexEvents) != 1 {
		t.Fatalf("%d and %d events, want 3 and 1", len(acmeEvents), len(globexEvents))
	}

	got := byEndpoint(claimHooks(t, s, t0))
	for _, e := range []*mailroom.WebhookEndpoint{queued, star} {
		if ids := eventIDs(got[e.ID]); !slices.Equal(ids, acmeEvents) {
			t.Fatalf("endpoint subscribed to %v got events %v, want each of %v once", e.Events, ids, acmeEvents)
		}
	}
	for _, e := range []*mailroom.WebhookEndpoint{delivered, domains, off} {
		if len(got[e.ID]) != 0 {
			t.Fatalf("endpoint subscribed to %v (enabled %v) got %d deliveries of email.queued", e.Events, e.Enabled, len(got[e.ID]))
		}
	}
	if ds := got[theirs.ID]; len(ds) != 1 || ds[0].Event.ID != globexEvents[0].ID || ds[0].AccountID != globex.ID {
		t.Fatalf("globex's endpoint got %d deliveries, want its own event alone", len(ds))
	}
	if len(got) != 3 {
		t.Fatalf("deliveries went to %d endpoints, want 3", len(got))
	}

	// A claimed delivery carries its event and endpoint.
	var d *mailroom.WebhookDelivery
	for _, x := range got[star.ID] {
		if x.Event.MessageID == m1.ID {
			d = x
		}
	}
	if d == nil || d.AccountID != acme.ID || d.Attempts != 0 || !d.CreatedAt.Equal(t0) || !d.DueAt.Equal(t0) ||
		d.ClaimToken == "" {
		t.Fatalf("delivery of m1 to * : %+v", d)
	}
	if ev := d.Event; ev.AccountID != acme.ID || ev.Type != mailroom.EventEmailQueued || ev.Recipient != "a@x.example" ||
		!ev.CreatedAt.Equal(t0) || !bytes.Contains(ev.Data, []byte(m1.ID)) {
		t.Fatalf("the delivery's event: %+v (%s)", ev, ev.Data)
	}
	if w := d.Endpoint; w == nil || w.ID != star.ID || w.URL != star.URL || !bytes.Equal(w.SecretSealed, star.SecretSealed) || !w.Enabled {
		t.Fatalf("the delivery's endpoint: %+v", w)
	}

	// A single event (a domain check's) fans out by its type too.
	dom := NewDomain(acme, "shop.example", t0)
	if err := s.CreateDomain(ctx, dom, mailroom.DefaultMaxDomains); err != nil {
		t.Fatal(err)
	}
	// (Within the lease of the claims above.)
	ev := domainEvent(t, s, dom, mailroom.EventDomainVerified, t0.Add(30*time.Second))
	got = byEndpoint(claimHooks(t, s, t0.Add(30*time.Second)))
	if len(got) != 2 || len(got[star.ID]) != 1 || len(got[domains.ID]) != 1 || got[domains.ID][0].Event.ID != ev.ID {
		t.Fatalf("domain.verified went to %d endpoints (* %d, domain.verified %d), want one delivery to each of those two",
			len(got), len(got[star.ID]), len(got[domains.ID]))
	}
}

// A webhook.test event goes to the endpoint named, never to "*".
func testWebhookTestEvent(t *testing.T, s mailroom.Store) {
	ctx := context.Background()
	acme := NewAccount(t, s, "acme")
	star, named := addWebhook(t, s, acme, mailroom.AllEventTypes), addWebhook(t, s, acme, mailroom.EventEmailDelivered)
	dom := NewDomain(acme, "shop.example", t0)
	if err := s.CreateDomain(ctx, dom, mailroom.DefaultMaxDomains); err != nil {
		t.Fatal(err)
	}
	// Through the fan-out of a state change (as no caller does, but
	// nothing must send it to "*" either way).
	domainEvent(t, s, dom, mailroom.EventWebhookTest, t0)
	if got := claimHooks(t, s, t0); len(got) != 0 {
		t.Fatalf("a webhook.test event fanned out to %d endpoints", len(got))
	}
	ev := queueTo(t, s, acme, t0.Add(time.Second), named)
	got := claimHooks(t, s, t0.Add(time.Second))
	if len(got) != 1 || got[0].EndpointID != named.ID || got[0].Event.ID != ev.ID {
		t.Fatalf("the test event went to %d deliveries, want one to the endpoint named (not %s)", len(got), star.ID)
	}
}

// A change that rolls back leaves no delivery, though its events fanned
// out before the failure.
func testWebhookFanOutRolledBack(t *testing.T, s mailroom.Store) {
	ctx := context.Background()
	acme := NewAccount(t, s, "acme")
	addWebhook(t, s, acme, mailroom.AllEventTypes)
	delivered := addWebhook(t, s, acme, mailroom.EventEmailDelivered)

	// A check of a domain deleted meanwhile.
	dom := NewDomain(acme, "shop.example", t0)
	if err := s.CreateDomain(ctx, dom, mailroom.DefaultMaxDomains); err != nil {
		t.Fatal(err)
	}
	if err := s.DeleteDomain(ctx, acme.ID, dom.Name); err != nil {
		t.Fatal(err)
	}
	ev := Try(mailroom.NewEvent(acme.ID, mailroom.EventDomainVerified, map[string]string{"domain": dom.Name}, t0)).Must(t)
	wantCode(t, s.SaveDomainCheck(ctx, dom, ev), mailroom.ECodeNotFound)
	if n := backlog(t, s); n != 0 {
		t.Fatalf("a rolled-back domain check left %d deliveries", n)
	}
	_, err := s.Event(ctx, acme.ID, ev.ID)
	wantCode(t, err, mailroom.ECodeNotFound)

	// Two outcomes recorded together, whose second fails (its event's id
	// is the first's): the first's event had fanned out in the same
	// transaction.
	m := NewMessage(acme, t0, "a@x.example", "b@x.example")
	Try(s.AcceptMessage(ctx, m)).Must(t)
	for _, d := range claimHooks(t, s, t0) { // the two email.queued deliveries to "*"
		record(t, s, never, outcome(d, 1, 200, t0, nil))
	}
	qs := Try(claim(s, "node_a", t0, 10)).Must(t)
	if len(qs) != 2 {
		t.Fatalf("claimed %d recipients, want 2", len(qs))
	}
	attempts := make([]*mailroom.Attempt, len(qs))
	for i, q := range qs {
		r := q.Recipient
		r.Status, r.Attempts, r.SMTPCode, r.SMTPResponse = mailroom.RecipientDelivered, 1, 250, "250 ok"
		attempts[i] = &mailroom.Attempt{Recipient: &r, Message: q.Message, ClaimToken: q.ClaimToken,
			Event: mailroom.NewEmailEvent(q.Message, &r, mailroom.EventEmailDelivered, t0.Add(time.Second))}
	}
	good := attempts[1].Event.ID
	attempts[1].Event.ID = attempts[0].Event.ID
	if err := s.RecordAttempts(ctx, attempts); err == nil {
		t.Fatal("recording two events under one id succeeded")
	}
	if n := backlog(t, s); n != 0 {
		t.Fatalf("a rolled-back outcome left %d deliveries", n)
	}
	attempts[1].Event.ID = good
	if err := s.RecordAttempts(ctx, attempts); err != nil {
		t.Fatal(err)
	}
	got := byEndpoint(claimHooks(t, s, t0.Add(time.Second)))
	if len(got[delivered.ID]) != 2 {
		t.Fatalf("once committed, email.delivered made %d deliveries to its endpoint, want 2", len(got[delivered.ID]))
	}
}

func testWebhookReplay(t *testing.T, s mailroom.Store) {
	ctx := context.Background()
	acme, globex := NewAccount(t, s, "acme"), NewAccount(t, s, "globex")
	hook, star := addWebhook(t, s, acme, mailroom.EventEmailQueued), addWebhook(t, s, acme, mailroom.AllEventTypes)
	theirs := addWebhook(t, s, globex, mailroom.AllEventTypes)
	m := NewMessage(acme, t0, "a@x.example")
	Try(s.AcceptMessage(ctx, m)).Must(t)
	ev := allEvents(t, s, acme.ID)[0]

	// Replayed while the first delivery is still pending: a second one.
	replayAt := t0.Add(time.Hour)
	if err := s.AddWebhookDeliveries(ctx, acme.ID, ev.ID, []string{hook.ID}, replayAt); err != nil {
		t.Fatal(err)
	}
	got := byEndpoint(claimHooks(t, s, replayAt))
	ds := got[hook.ID]
	if len(ds) != 2 || ds[0].ID == ds[1].ID || ds[0].Event.ID != ev.ID || ds[1].Event.ID != ev.ID {
		t.Fatalf("after a replay, the endpoint has %d deliveries, want two of event %s", len(ds), ev.ID)
	}
	replay := ds[0]
	if replay.CreatedAt.Equal(t0) {
		replay = ds[1]
	}
	if !replay.CreatedAt.Equal(replayAt) || !replay.DueAt.Equal(replayAt) || replay.Attempts != 0 {
		t.Fatalf("the replay: %+v", replay)
	}
	if len(got[star.ID]) != 1 || len(got[theirs.ID]) != 0 {
		t.Fatalf("a replay to one endpoint reached others: * has %d, globex %d", len(got[star.ID]), len(got[theirs.ID]))
	}

	// To another account's endpoint: not found, and nothing is queued,
	// not even to the account's own endpoint named beside it.
	before := backlog(t, s)
	wantCode(t, s.AddWebhookDeliveries(ctx, acme.ID, ev.ID, []string{theirs.ID}, replayAt), mailroom.ECodeNotFound)
	wantCode(t, s.AddWebhookDeliveries(ctx, acme.ID, ev.ID, []string{hook.ID, theirs.ID}, replayAt), mailroom.ECodeNotFound)
	wantCode(t, s.AddWebhookDeliveries(ctx, acme.ID, ev.ID, []string{"wh_unknown"}, replayAt), mailroom.ECodeNotFound)
	if n := backlog(t, s); n != before {
		t.Fatalf("refused replays queued %d deliveries", n-before)
	}
}

// A replay names an account; an event of another account is not found,
// as Event says, and never reaches this account's endpoint.
func testWebhookReplayForeignEvent(t *testing.T, s mailroom.Store) {
	ctx := context.Background()
	acme, globex := NewAccount(t, s, "acme"), NewAccount(t, s, "globex")
	theirs := addWebhook(t, s, globex, mailroom.AllEventTypes)
	Try(s.AcceptMessage(ctx, NewMessage(acme, t0, "a@x.example"))).Must(t)
	ev := allEvents(t, s, acme.ID)[0]
	err := s.AddWebhookDeliveries(ctx, globex.ID, ev.ID, []string{theirs.ID}, t0)
	got := claimHooks(t, s, t0)
	for _, d := range got {
		if d.EndpointID == theirs.ID {
			t.Fatalf("acme's event %s was queued to globex's endpoint (AddWebhookDeliveries returned %v)", d.Event.ID, err)
		}
	}
	wantCode(t, err, mailroom.ECodeNotFound)
}

func testWebhookInsertEventFor(t *testing.T, s mailroom.Store) {
	ctx := context.Background()
	acme, globex := NewAccount(t, s, "acme"), NewAccount(t, s, "globex")
	target := addWebhook(t, s, acme, mailroom.EventEmailDelivered)
	star := addWebhook(t, s, acme, mailroom.AllEventTypes)
	theirs := addWebhook(t, s, globex, mailroom.AllEventTypes)

	// Whatever its type, the event goes to the endpoint named alone.
	for i, typ := range []string{mailroom.EventWebhookTest, mailroom.EventDomainVerified} {
		at := t0.Add(time.Duration(i) * time.Second) // within the lease of the first's claim
		ev := Try(mailroom.NewEvent(acme.ID, typ, map[string]string{"n": fmt.Sprint(i)}, at)).Must(t)
		if err := s.InsertEventFor(ctx, ev, []string{target.ID}); err != nil {
			t.Fatal(err)
		}
		stored := Try(s.Event(ctx, acme.ID, ev.ID)).Must(t)
		if stored.Type != typ || !stored.CreatedAt.Equal(at) || string(stored.Data) != string(ev.Data) {
			t.Fatalf("stored event: %+v", stored)
		}
		got := claimHooks(t, s, at)
		if len(got) != 1 || got[0].EndpointID != target.ID || got[0].Event.ID != ev.ID {
			t.Fatalf("a %s event for one endpoint made %d deliveries (* is %s)", typ, len(got), star.ID)
		}
	}

	// Another account's endpoint: not found, and the event is not kept.
	ev := Try(mailroom.NewEvent(acme.ID, mailroom.EventWebhookTest, map[string]string{}, t0)).Must(t)
	wantCode(t, s.InsertEventFor(ctx, ev, []string{theirs.ID}), mailroom.ECodeNotFound)
	_, err := s.Event(ctx, acme.ID, ev.ID)
	wantCode(t, err, mailroom.ECodeNotFound)
	if n := backlog(t, s); n != 2 {
		t.Fatalf("%d deliveries pending, want the two claimed ones", n)
	}
}
