package storetest

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mailroom/mailroom"
)

// What a consumer reads back (the attempts log, the events list) and what
// retention removes.

func init() {
	extraSuites = append(extraSuites,
		suite{"WebhookAttemptsList", testWebhookAttemptsList},
		suite{"WebhookEventsList", testWebhookEventsList},
	)
}

// allAttempts pages through an endpoint's attempts, three at a time.
func allAttempts(t *testing.T, s mailroom.Store, accountID, endpointID string, f mailroom.WebhookAttemptFilter) []*mailroom.WebhookAttempt {
	t.Helper()
	var all []*mailroom.WebhookAttempt
	cursor := ""
	for {
		page, next := Try2(s.ListWebhookAttempts(context.Background(), accountID, endpointID, f, mailroom.Page{Limit: 3, Cursor: cursor})).Must(t)
		all = append(all, page...)
		if next == "" {
			return all
		}
		cursor = next
	}
}

// eventsWhere pages through an account's events that f keeps, two at a
// time, and returns their ids.
func eventsWhere(t *testing.T, s mailroom.Store, accountID string, f mailroom.EventFilter) []string {
	t.Helper()
	var ids []string
	cursor := ""
	for {
		page, next := Try2(s.ListEvents(context.Background(), accountID, f, mailroom.Page{Limit: 2, Cursor: cursor})).Must(t)
		for _, e := range page {
			ids = append(ids, e.ID)
		}
		if next == "" {
			return ids
		}
		cursor = next
	}
}

func attemptIDs(as []*mailroom.WebhookAttempt) []string {
	var ids []string
	for _, a := range as {
		ids = append(ids, a.ID)
	}
	return ids
}

func testWebhookAttemptsList(t *testing.T, s mailroom.Store) {
	ctx := context.Background()
	acme, globex := NewAccount(t, s, "acme"), NewAccount(t, s, "globex")
	hook, other := addWebhook(t, s, acme, "*"), addWebhook(t, s, acme, "*")
	ev1, ev2, ev3 := queueTo(t, s, acme, t0, hook), queueTo(t, s, acme, t0.Add(time.Second), hook), queueTo(t, s, acme, t0.Add(2*time.Second), hook)
	queueTo(t, s, acme, t0, other)
	byEvent := func(ds []*mailroom.WebhookDelivery) map[string]*mailroom.WebhookDelivery {
		m := map[string]*mailroom.WebhookDelivery{}
		for _, d := range ds {
			if d.EndpointID == hook.ID {
				m[d.Event.ID] = d
			}
		}
		return m
	}

	// Every delivery fails once; then ev1's and ev2's succeed and ev3's
	// fails again.
	var made []*mailroom.WebhookOutcome
	retry := t0.Add(time.Minute)
	claimed := claimHooks(t, s, t0.Add(2*time.Second))
	ds := byEvent(claimed)
	for _, ev := range []*mailroom.Event{ev1, ev2, ev3} {
		made = append(made, outcome(ds[ev.ID], 1, 500, t0.Add(3*time.Second), &retry))
	}
	for _, d := range claimed {
		if d.EndpointID == other.ID {
			record(t, s, never, outcome(d, 1, 500, t0.Add(3*time.Second), &retry))
		}
	}
	record(t, s, never, made...)
	ds = byEvent(claimHooks(t, s, retry))
	retry2 := t0.Add(2 * time.Minute)
	second := []*mailroom.WebhookOutcome{
		outcome(ds[ev1.ID], 2, 200, retry.Add(time.Second), nil),
		outcome(ds[ev2.ID], 2, 200, retry.Add(time.Second), nil),
		outcome(ds[ev3.ID], 2, 502, retry.Add(time.Second), &retry2),
	}
	record(t, s, never, second...)
	made = append(made, second...)

	// Newest first, across pages.
	var want []string
	for i := len(made) - 1; i >= 0; i-- {
		want = append(want, made[i].Attempt.ID)
	}
	all := allAttempts(t, s, acme.ID, hook.ID, mailroom.WebhookAttemptFilter{})
	if got := attemptIDs(all); !slices.Equal(got, want) {
		t.Fatalf("attempts %v, want %v (newest first, the other endpoint's left out)", got, want)
	}
	for i := 1; i < len(all); i++ {
		if all[i].CreatedAt.After(all[i-1].CreatedAt) {
			t.Fatalf("not newest first: %v after %v", all[i].CreatedAt, all[i-1].CreatedAt)
		}
	}
	first, next := Try2(s.ListWebhookAttempts(ctx, acme.ID, hook.ID, mailroom.WebhookAttemptFilter{}, mailroom.Page{Limit: 4})).Must(t)
	if len(first) != 4 || next == "" {
		t.Fatalf("a first page of 4: %d, next %q", len(first), next)
	}

	filtered := map[string]struct {
		f    mailroom.WebhookAttemptFilter
		want []*mailroom.WebhookOutcome
	}{
		"eventId":           {mailroom.WebhookAttemptFilter{EventID: ev1.ID}, []*mailroom.WebhookOutcome{made[3], made[0]}},
		"failed":            {mailroom.WebhookAttemptFilter{Status: mailroom.WebhookAttemptFailed}, []*mailroom.WebhookOutcome{made[5], made[2], made[1], made[0]}},
		"succeeded":         {mailroom.WebhookAttemptFilter{Status: mailroom.WebhookAttemptSucceeded}, []*mailroom.WebhookOutcome{made[4], made[3]}},
		"eventId succeeded": {mailroom.WebhookAttemptFilter{EventID: ev3.ID, Status: mailroom.WebhookAttemptSucceeded}, nil},
		"eventId failed":    {mailroom.WebhookAttemptFilter{EventID: ev3.ID, Status: mailroom.WebhookAttemptFailed}, []*mailroom.WebhookOutcome{made[5], made[2]}},
	}
	for name, c := range filtered {
		var want []string
		for _, o := range c.want {
			want = append(want, o.Attempt.ID)
		}
		if got := attemptIDs(allAttempts(t, s, acme.ID, hook.ID, c.f)); !slices.Equal(got, want) {
			t.Fatalf("%s: got %v, want %v", name, got, want)
		}
	}

	if got := allAttempts(t, s, acme.ID, other.ID, mailroom.WebhookAttemptFilter{}); len(got) != 1 {
		t.Fatalf("the other endpoint lists %d attempts, want its 1", len(got))
	}
	if got := allAttempts(t, s, globex.ID, hook.ID, mailroom.WebhookAttemptFilter{}); len(got) != 0 {
		t.Fatalf("another account lists %d of acme's attempts", len(got))
	}
	_, _, err := s.ListWebhookAttempts(ctx, acme.ID, hook.ID, mailroom.WebhookAttemptFilter{}, mailroom.Page{Cursor: "not-a-cursor!"})
	wantCode(t, err, mailroom.ECodeValidation)
}

func testWebhookEventsList(t *testing.T, s mailroom.Store) {
	ctx := context.Background()
	acme, globex := NewAccount(t, s, "acme"), NewAccount(t, s, "globex")
	m1, m2 := NewMessage(acme, t0, "a@x.example", "b@x.example"), NewMessage(acme, t0.Add(time.Second), "c@x.example")
	acceptAll(t, s, []*mailroom.Message{m1, m2, NewMessage(globex, t0, "d@x.example")})
	dom := NewDomain(acme, "shop.example", t0)
	if err := s.CreateDomain(ctx, dom, mailroom.DefaultMaxDomains); err != nil {
		t.Fatal(err)
	}
	since := t0.Add(10 * time.Second)
	verified := domainEvent(t, s, dom, mailroom.EventDomainVerified, t0.Add(2*time.Second))
	failed := domainEvent(t, s, dom, mailroom.EventDomainFailed, t0.Add(3*time.Second))
	before := domainEvent(t, s, dom, mailroom.EventDomainVerified, since.Add(-time.Millisecond))
	atSince := domainEvent(t, s, dom, mailroom.EventDomainVerified, since)
	// Within one millisecond, microseconds still count.
	micro := since.Add(10*time.Second + 300*time.Microsecond)
	inMilli := domainEvent(t, s, dom, mailroom.EventDomainTemporaryFailure, micro)

	all := eventsWhere(t, s, acme.ID, mailroom.EventFilter{})
	if len(all) != 8 || !slices.IsSortedFunc(all, func(a, b string) int { return strings.Compare(b, a) }) || all[0] != inMilli.ID {
		t.Fatalf("all events: %v, want 8 newest first", all)
	}
	var m1Events []string
	for _, e := range allEvents(t, s, acme.ID) {
		if e.MessageID == m1.ID {
			m1Events = append(m1Events, e.ID)
		}
	}

	at := func(t time.Time) *time.Time { return &t }
	cases := map[string]struct {
		f    mailroom.EventFilter
		want int
		must []string
	}{
		"type email.queued":         {mailroom.EventFilter{Type: mailroom.EventEmailQueued}, 3, m1Events},
		"type domain.verified":      {mailroom.EventFilter{Type: mailroom.EventDomainVerified}, 3, []string{verified.ID, before.ID, atSince.ID}},
		"type domain.failed":        {mailroom.EventFilter{Type: mailroom.EventDomainFailed}, 1, []string{failed.ID}},
		"messageId":                 {mailroom.EventFilter{MessageID: m1.ID}, 2, m1Events},
		"messageId and type":        {mailroom.EventFilter{MessageID: m1.ID, Type: mailroom.EventDomainVerified}, 0, nil},
		"since, exactly":            {mailroom.EventFilter{Since: at(since)}, 2, []string{atSince.ID, inMilli.ID}},
		"since, a millisecond less": {mailroom.EventFilter{Since: at(since.Add(-time.Millisecond))}, 3, []string{before.ID, atSince.ID, inMilli.ID}},
		"since, later in the ms":    {mailroom.EventFilter{Since: at(micro.Add(time.Microsecond))}, 0, nil},
		"since, earlier in the ms":  {mailroom.EventFilter{Since: at(micro.Add(-100 * time.Microsecond))}, 1, []string{inMilli.ID}},
		"since and type":            {mailroom.EventFilter{Since: at(t0.Add(time.Second)), Type: mailroom.EventEmailQueued}, 1, nil},
		"since t0, paged":           {mailroom.EventFilter{Since: at(t0)}, 8, nil},
	}
	for name, c := range cases {
		got := eventsWhere(t, s, acme.ID, c.f)
		if len(got) != c.want {
			t.Fatalf("%s: %d events %v, want %d", name, len(got), got, c.want)
		}
		for _, id := range c.must {
			if !slices.Contains(got, id) {
				t.Fatalf("%s: %v lacks %s", name, got, id)
			}
		}
		for _, id := range got {
			e := Try(s.Event(ctx, acme.ID, id)).Must(t)
			if (c.f.Type != "" && e.Type != c.f.Type) || (c.f.MessageID != "" && e.MessageID != c.f.MessageID) ||
				(c.f.Since != nil && e.CreatedAt.Before(*c.f.Since)) {
				t.Fatalf("%s: listed %+v", name, e)
			}
		}
	}

	got := Try(s.Event(ctx, acme.ID, verified.ID)).Must(t)
	if got.Type != verified.Type || got.AccountID != acme.ID || !got.CreatedAt.Equal(verified.CreatedAt) || string(got.Data) != string(verified.Data) {
		t.Fatalf("Event: %+v", got)
	}
	_, err := s.Event(ctx, globex.ID, verified.ID)
	wantCode(t, err, mailroom.ECodeNotFound)
	_, err = s.Event(ctx, acme.ID, "evt_unknown")
	wantCode(t, err, mailroom.ECodeNotFound)
	if theirs := eventsWhere(t, s, globex.ID, mailroom.EventFilter{}); len(theirs) != 1 {
		t.Fatalf("globex lists %d events, want its 1", len(theirs))
	}
	_, _, err = s.ListEvents(ctx, acme.ID, mailroom.EventFilter{}, mailroom.Page{Cursor: "not-a-cursor!"})
	wantCode(t, err, mailroom.ECodeValidation)
}
