package storetest

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mailroom/mailroom"
)

func init() {
	extraSuites = append(extraSuites,
		suite{"ScheduledClaimedOnTime", testScheduledClaimedOnTime},
		suite{"ScheduledDomainAtDueTime", testScheduledDomainAtDueTime},
		suite{"ScheduledSuppressedSince", testScheduledSuppressedSince},
		suite{"ScheduledSkippedDomainStarted", testScheduledSkippedDomain},
		suite{"ListScheduled", testListScheduled},
		suite{"RescheduleMessage", testRescheduleMessage},
		suite{"CancelMessage", testCancelMessage},
		suite{"ScheduledCancelRacesClaim", testCancelRacesClaim},
		suite{"ScheduledRescheduleRacesClaim", testRescheduleRacesClaim},
	)
}

// newScheduledMessage returns an unsaved message of acct created at t0 and
// scheduled at at, as Validate makes one.
func newScheduledMessage(acct *mailroom.Account, at time.Time, to ...string) *mailroom.Message {
	m := NewMessage(acct, t0, to...)
	scheduleMessage(m, at)
	return m
}

// sendingDomain stores acct's domain name (the one NewMessage sends from
// is shop.example) in status st: a scheduled message is checked against
// it when it comes due.
func sendingDomain(t *testing.T, s mailroom.Store, acct *mailroom.Account, name string, st mailroom.DomainStatus) *mailroom.Domain {
	t.Helper()
	d := NewDomain(acct, name, t0.Add(24*time.Hour))
	d.Status = st
	if st != mailroom.DomainPending {
		d.VerifiedAt = &t0
	}
	if err := s.CreateDomain(context.Background(), d, mailroom.DefaultMaxDomains); err != nil {
		t.Fatal(err)
	}
	return d
}

// accept stores m and checks the answer's status.
func accept(t *testing.T, s mailroom.Store, m *mailroom.Message, want mailroom.MessageStatus) {
	t.Helper()
	res := Try(s.AcceptMessage(context.Background(), m)).Must(t)
	if res.Duplicate || res.MessageID != m.ID || res.Status != want {
		t.Fatalf("accept: %+v, want %s %s", res, m.ID, want)
	}
}

// of keeps the claimed recipients of message id.
func of(qs []*mailroom.QueuedRecipient, id string) []*mailroom.QueuedRecipient {
	var out []*mailroom.QueuedRecipient
	for _, q := range qs {
		if q.MessageID == id {
			out = append(out, q)
		}
	}
	return out
}

// claimAt claims up to 100 messages due at now for node, under a long lease.
func claimAt(t *testing.T, s mailroom.Store, node string, now time.Time, skip ...string) []*mailroom.QueuedRecipient {
	t.Helper()
	return Try(s.ClaimDueRecipients(context.Background(), mailroom.Claim{Node: node, Now: now, Lease: time.Hour,
		Limit: 100, SkipDomains: skip})).Must(t)
}

// timeline returns the types of a recipient's events, in order.
func timeline(events []*mailroom.Event, address string) []string {
	var out []string
	for _, e := range events {
		if e.Recipient == address {
			out = append(out, e.Type)
		}
	}
	return out
}

// wantMessage checks a message's status and each recipient's, by address.
func wantMessage(t *testing.T, s mailroom.Store, acct *mailroom.Account, id string, st mailroom.MessageStatus,
	recipients map[string]mailroom.RecipientStatus) (*mailroom.Message, []*mailroom.Event) {
	t.Helper()
	m, events := messageOf(t, s, acct.ID, id)
	if m.Status != st {
		t.Fatalf("message %s is %s, want %s", id, m.Status, st)
	}
	if len(m.Recipients) != len(recipients) {
		t.Fatalf("message %s has %d recipients, want %d", id, len(m.Recipients), len(recipients))
	}
	for _, r := range m.Recipients {
		if want, ok := recipients[r.Address]; !ok || r.Status != want {
			t.Fatalf("message %s: %s is %s, want %s", id, r.Address, r.Status, want)
		}
	}
	return m, events
}

// A scheduled message is not claimed before its time; at it, the claim
// takes it, its recipients queued, each with an email.queued event after
// its email.scheduled one.
func testScheduledClaimedOnTime(t *testing.T, s mailroom.Store) {
	acct := NewAccount(t, s, "acme")
	sendingDomain(t, s, acct, "shop.example", mailroom.DomainVerified)
	at, at2 := t0.Add(time.Hour), t0.Add(2*time.Hour)
	m := newScheduledMessage(acct, at, "a@x.example", "b@y.example")
	late := newScheduledMessage(acct, at2, "c@x.example")
	accept(t, s, m, mailroom.MessageScheduled)
	accept(t, s, late, mailroom.MessageScheduled)
	got, events := wantMessage(t, s, acct, m.ID, mailroom.MessageScheduled,
		map[string]mailroom.RecipientStatus{"a@x.example": mailroom.RecipientScheduled, "b@y.example": mailroom.RecipientScheduled})
	if got.ScheduledAt == nil || !got.ScheduledAt.Equal(at) {
		t.Fatalf("scheduledAt %v, want %v", got.ScheduledAt, at)
	}
	for _, r := range got.Recipients {
		if r.NextAttemptAt == nil || !r.NextAttemptAt.Equal(at) {
			t.Fatalf("%s: next attempt %v, want %v", r.Address, r.NextAttemptAt, at)
		}
		if tl := timeline(events, r.Address); !slices.Equal(tl, []string{mailroom.EventEmailScheduled}) {
			t.Fatalf("%s: timeline %v", r.Address, tl)
		}
	}

	for _, now := range []time.Time{t0, at.Add(-time.Microsecond)} {
		if q := claimAt(t, s, "node_a", now); len(q) != 0 {
			t.Fatalf("claimed %v at %v, before the scheduled time", addresses(q), now)
		}
	}
	q := claimAt(t, s, "node_a", at)
	if len(q) != 2 || len(of(q, m.ID)) != 2 {
		t.Fatalf("claimed %v at the scheduled time, want the two recipients of %s", addresses(q), m.ID)
	}
	for _, r := range q {
		if r.Status != mailroom.RecipientQueued || !r.QueuedAt.Equal(at) || r.Message.Domain != "shop.example" ||
			r.Message.Subject != m.Subject || r.Message.Tags["kind"] != "receipt" || r.ClaimToken == "" {
			t.Fatalf("claimed %+v %+v", r, r.Message)
		}
	}
	got, events = wantMessage(t, s, acct, m.ID, mailroom.MessageQueued,
		map[string]mailroom.RecipientStatus{"a@x.example": mailroom.RecipientQueued, "b@y.example": mailroom.RecipientQueued})
	for _, r := range got.Recipients {
		// A started message's recipients are as a message sent at once.
		if r.NextAttemptAt != nil {
			t.Fatalf("%s: next attempt %v once queued", r.Address, r.NextAttemptAt)
		}
		if tl := timeline(events, r.Address); !slices.Equal(tl, []string{mailroom.EventEmailScheduled, mailroom.EventEmailQueued}) {
			t.Fatalf("%s: timeline %v", r.Address, tl)
		}
	}
	for _, e := range events {
		if e.Type == mailroom.EventEmailQueued && !e.CreatedAt.Equal(at) {
			t.Fatalf("email.queued at %v, want the claim's time %v", e.CreatedAt, at)
		}
	}
	// It is held by its claim; the later message waits for its own time,
	// and is taken after it too.
	if q := claimAt(t, s, "node_b", at2.Add(-time.Second)); len(q) != 0 {
		t.Fatalf("claimed %v", addresses(q))
	}
	if q := claimAt(t, s, "node_b", at2.Add(5*time.Minute)); len(q) != 1 || q[0].MessageID != late.ID || q[0].Status != mailroom.RecipientQueued {
		t.Fatalf("after its time, claimed %v, want %s's", addresses(q), late.ID)
	}
	wantMessage(t, s, acct, late.ID, mailroom.MessageQueued, map[string]mailroom.RecipientStatus{"c@x.example": mailroom.RecipientQueued})
	// Neither can be changed now.
	for _, id := range []string{m.ID, late.ID} {
		wantCode(t, s.CancelMessage(context.Background(), acct.ID, id, at2), mailroom.ECodeInvalidState)
	}
}

// When its time comes, a scheduled message is checked against its sending
// domain as it is then: gone, failed or pending, its recipients fail
// unattempted; in temporary failure it still sends.
func testScheduledDomainAtDueTime(t *testing.T, s mailroom.Store) {
	ctx := context.Background()
	at := t0.Add(time.Hour)
	type domainCase struct {
		name   string
		acct   *mailroom.Account
		m      *mailroom.Message
		sends  bool
		reason string
	}
	cases := []*domainCase{
		{name: "deleted", reason: "removed"},
		{name: "failed", reason: "failed"},
		{name: "pending", reason: "pending"},
		{name: "temporary_failure", sends: true},
		{name: "verified", sends: true},
	}
	for _, c := range cases {
		c.acct = NewAccount(t, s, c.name)
		d := sendingDomain(t, s, c.acct, "shop.example", mailroom.DomainVerified)
		c.m = newScheduledMessage(c.acct, at, "a@x.example", "b@y.example")
		accept(t, s, c.m, mailroom.MessageScheduled)
		switch c.name {
		case "deleted":
			if err := s.DeleteDomain(ctx, c.acct.ID, "shop.example"); err != nil {
				t.Fatal(err)
			}
		case "pending":
			// Removed and added again: not verified yet.
			if err := s.DeleteDomain(ctx, c.acct.ID, "shop.example"); err != nil {
				t.Fatal(err)
			}
			sendingDomain(t, s, c.acct, "shop.example", mailroom.DomainPending)
		case "failed", "temporary_failure":
			d.Status = mailroom.DomainStatus(c.name)
			if err := s.SaveDomainCheck(ctx, d, nil); err != nil {
				t.Fatal(err)
			}
		}
	}
	q := claimAt(t, s, "node_a", at)
	for _, c := range cases {
		mine := of(q, c.m.ID)
		if !c.sends {
			if len(mine) != 0 {
				t.Fatalf("%s domain: claimed %v", c.name, addresses(mine))
			}
			m, events := wantMessage(t, s, c.acct, c.m.ID, mailroom.MessageFailed,
				map[string]mailroom.RecipientStatus{"a@x.example": mailroom.RecipientFailed, "b@y.example": mailroom.RecipientFailed})
			for _, r := range m.Recipients {
				if !strings.Contains(r.SMTPResponse, "shop.example") || !strings.Contains(r.SMTPResponse, c.reason) ||
					r.NextAttemptAt != nil || r.Attempts != 0 {
					t.Fatalf("%s domain: %s failed with %q, next %v, %d attempts", c.name, r.Address, r.SMTPResponse, r.NextAttemptAt, r.Attempts)
				}
				if tl := timeline(events, r.Address); !slices.Equal(tl, []string{mailroom.EventEmailScheduled, mailroom.EventEmailFailed}) {
					t.Fatalf("%s domain: %s timeline %v", c.name, r.Address, tl)
				}
			}
			continue
		}
		if len(mine) != 2 {
			t.Fatalf("%s domain: claimed %v, want both recipients", c.name, addresses(mine))
		}
		for _, r := range mine {
			if r.Status != mailroom.RecipientQueued {
				t.Fatalf("%s domain: claimed %s %s", c.name, r.Address, r.Status)
			}
		}
		wantMessage(t, s, c.acct, c.m.ID, mailroom.MessageQueued,
			map[string]mailroom.RecipientStatus{"a@x.example": mailroom.RecipientQueued, "b@y.example": mailroom.RecipientQueued})
	}
	// The failed recipients left the claim with the start: only the sent
	// ones are held, and only they come back once released.
	if n := Try(s.ReleaseAllClaims(ctx)).Must(t); n != 4 {
		t.Fatalf("released %d claims, want the 4 recipients sent", n)
	}
	again := claimAt(t, s, "node_b", at.Add(24*time.Hour))
	if len(again) != 4 {
		t.Fatalf("claimed %v after the release, want the 4 recipients sent", addresses(again))
	}
	for _, c := range cases {
		if got := of(again, c.m.ID); c.sends != (len(got) == 2) {
			t.Fatalf("%s domain: claimed %v after the release", c.name, addresses(got))
		}
	}
}

// An address suppressed after the accept, before the time, is suppressed
// when the message starts; the rest is sent.
func testScheduledSuppressedSince(t *testing.T, s mailroom.Store) {
	ctx := context.Background()
	acct := NewAccount(t, s, "acme")
	sendingDomain(t, s, acct, "shop.example", mailroom.DomainVerified)
	at := t0.Add(time.Hour)
	m := newScheduledMessage(acct, at, "a@x.example", "b@x.example", "c@y.example")
	all := newScheduledMessage(acct, at, "b@x.example")
	accept(t, s, m, mailroom.MessageScheduled)
	accept(t, s, all, mailroom.MessageScheduled)
	Try(s.AddSuppression(ctx, &mailroom.Suppression{AccountID: acct.ID, Address: "B@X.example", Reason: mailroom.SuppressedComplaint,
		CreatedAt: t0.Add(time.Minute)})).Must(t)

	q := claimAt(t, s, "node_a", at)
	if got := addresses(of(q, m.ID)); !slices.Equal(got, []string{"a@x.example", "c@y.example"}) {
		t.Fatalf("claimed %v, want a and c", got)
	}
	if got := of(q, all.ID); len(got) != 0 {
		t.Fatalf("claimed %v, whom the account suppressed", addresses(got))
	}
	_, events := wantMessage(t, s, acct, m.ID, mailroom.MessageQueued, map[string]mailroom.RecipientStatus{
		"a@x.example": mailroom.RecipientQueued, "b@x.example": mailroom.RecipientSuppressed, "c@y.example": mailroom.RecipientQueued})
	if tl := timeline(events, "b@x.example"); !slices.Equal(tl, []string{mailroom.EventEmailScheduled, mailroom.EventEmailSuppressed}) {
		t.Fatalf("suppressed recipient's timeline %v", tl)
	}
	if tl := timeline(events, "a@x.example"); !slices.Equal(tl, []string{mailroom.EventEmailScheduled, mailroom.EventEmailQueued}) {
		t.Fatalf("queued recipient's timeline %v", tl)
	}
	wantMessage(t, s, acct, all.ID, mailroom.MessageSuppressed, map[string]mailroom.RecipientStatus{"b@x.example": mailroom.RecipientSuppressed})
	if n := Try(s.ReleaseAllClaims(ctx)).Must(t); n != 2 {
		t.Fatalf("released %d claims, want the 2 sent", n)
	}
}

// A claim that skips one of a scheduled message's recipient domains still
// starts the whole message: the skipped recipients are queued, unclaimed,
// for a later claim, and the message can no longer be canceled.
func testScheduledSkippedDomain(t *testing.T, s mailroom.Store) {
	ctx := context.Background()
	acct := NewAccount(t, s, "acme")
	sendingDomain(t, s, acct, "shop.example", mailroom.DomainVerified)
	at := t0.Add(time.Hour)
	m := newScheduledMessage(acct, at, "a@slow.example", "b@fast.example", "c@SLOW.example")
	// Another, at the busy domain only: not claimed, so not started.
	busy := newScheduledMessage(acct, at, "d@slow.example")
	accept(t, s, m, mailroom.MessageScheduled)
	accept(t, s, busy, mailroom.MessageScheduled)

	q := claimAt(t, s, "node_a", at, "slow.example")
	if got := addresses(q); !slices.Equal(got, []string{"b@fast.example"}) {
		t.Fatalf("claimed %v, want only the fast domain's recipient", got)
	}
	wantMessage(t, s, acct, m.ID, mailroom.MessageQueued, map[string]mailroom.RecipientStatus{
		"a@slow.example": mailroom.RecipientQueued, "b@fast.example": mailroom.RecipientQueued, "c@SLOW.example": mailroom.RecipientQueued})
	wantMessage(t, s, acct, busy.ID, mailroom.MessageScheduled, map[string]mailroom.RecipientStatus{"d@slow.example": mailroom.RecipientScheduled})

	wantCode(t, s.CancelMessage(ctx, acct.ID, m.ID, at), mailroom.ECodeInvalidState)
	// Once the claimed one's outcome is in, nothing holds the message; it
	// is still not scheduled any more.
	r := q[0].Recipient
	r.Status, r.Attempts = mailroom.RecipientDelivered, 1
	if err := s.RecordAttempts(ctx, []*mailroom.Attempt{{Recipient: &r, Message: q[0].Message, ClaimToken: q[0].ClaimToken,
		Event: mailroom.NewEmailEvent(q[0].Message, &r, mailroom.EventEmailDelivered, at)}}); err != nil {
		t.Fatal(err)
	}
	wantCode(t, s.CancelMessage(ctx, acct.ID, m.ID, at), mailroom.ECodeInvalidState)
	wantCode(t, s.RescheduleMessage(ctx, acct.ID, m.ID, at.Add(time.Hour), t0), mailroom.ECodeInvalidState)
	if list, _ := Try2(s.ListScheduled(ctx, acct.ID, mailroom.Page{})).Must(t); len(list) != 1 || list[0].ID != busy.ID {
		t.Fatalf("still scheduled: %d messages", len(list))
	}

	rest := claimAt(t, s, "node_b", at.Add(time.Minute))
	if got := addresses(of(rest, m.ID)); !slices.Equal(got, []string{"a@slow.example", "c@SLOW.example"}) {
		t.Fatalf("a later claim took %v, want the two at slow.example", got)
	}
	for _, r := range rest {
		if r.Status != mailroom.RecipientQueued {
			t.Fatalf("%s claimed %s", r.Address, r.Status)
		}
	}
	_, events := messageOf(t, s, acct.ID, m.ID)
	for _, a := range []string{"a@slow.example", "c@SLOW.example"} {
		if tl := timeline(events, a); !slices.Equal(tl, []string{mailroom.EventEmailScheduled, mailroom.EventEmailQueued}) {
			t.Fatalf("%s: timeline %v, want one email.queued", a, tl)
		}
	}
	// The busy domain's own message started with that claim.
	if got := of(rest, busy.ID); len(got) != 1 || got[0].Status != mailroom.RecipientQueued {
		t.Fatalf("the busy domain's message: claimed %v", addresses(got))
	}
}

// ListScheduled lists the account's scheduled messages only, soonest
// first (then by id), page by page; those canceled or started drop out.
func testListScheduled(t *testing.T, s mailroom.Store) {
	ctx := context.Background()
	acct, other := NewAccount(t, s, "acme"), NewAccount(t, s, "globex")
	sendingDomain(t, s, acct, "shop.example", mailroom.DomainVerified)
	var ms []*mailroom.Message
	// Two share a time, which falls across the first two pages.
	for _, h := range []int{3, 1, 2, 2, 4} {
		m := newScheduledMessage(acct, t0.Add(time.Duration(h)*time.Hour), fmt.Sprintf("r%d@x.example", len(ms)))
		accept(t, s, m, mailroom.MessageScheduled)
		ms = append(ms, m)
	}
	accept(t, s, NewMessage(acct, t0, "now@x.example"), mailroom.MessageQueued)
	theirs := newScheduledMessage(other, t0.Add(30*time.Minute), "r@x.example")
	accept(t, s, theirs, mailroom.MessageScheduled)

	want := slices.Clone(ms)
	slices.SortFunc(want, func(a, b *mailroom.Message) int {
		if c := a.ScheduledAt.Compare(*b.ScheduledAt); c != 0 {
			return c
		}
		return strings.Compare(a.ID, b.ID)
	})
	list := func(acctID string, limit int) ([]string, int) {
		t.Helper()
		var ids []string
		cursor, pages := "", 0
		for {
			page, next := Try2(s.ListScheduled(ctx, acctID, mailroom.Page{Limit: limit, Cursor: cursor})).Must(t)
			pages++
			if len(page) > limit {
				t.Fatalf("a page of %d, limit %d", len(page), limit)
			}
			for _, m := range page {
				if m.Status != mailroom.MessageScheduled || m.ScheduledAt == nil || m.AccountID != acctID ||
					len(m.Recipients) != 1 || m.Recipients[0].Status != mailroom.RecipientScheduled {
					t.Fatalf("listed %s %s at %v, %d recipients", m.ID, m.Status, m.ScheduledAt, len(m.Recipients))
				}
				ids = append(ids, m.ID)
			}
			if next == "" {
				return ids, pages
			}
			cursor = next
		}
	}
	idsOf := func(ms []*mailroom.Message) []string {
		var out []string
		for _, m := range ms {
			out = append(out, m.ID)
		}
		return out
	}
	got, pages := list(acct.ID, 2)
	if !slices.Equal(got, idsOf(want)) || pages != 3 {
		t.Fatalf("listed %v in %d pages, want %v in 3", got, pages, idsOf(want))
	}
	if got, _ := list(other.ID, 10); !slices.Equal(got, []string{theirs.ID}) {
		t.Fatalf("the other account lists %v", got)
	}
	_, _, err := s.ListScheduled(ctx, acct.ID, mailroom.Page{Cursor: "not-a-cursor!"})
	wantCode(t, err, mailroom.ECodeValidation)

	// Cancel one at 2 h and let the claim start the one at 1 h.
	if err := s.CancelMessage(ctx, acct.ID, ms[2].ID, t0); err != nil {
		t.Fatal(err)
	}
	if q := claimAt(t, s, "node_a", t0.Add(time.Hour)); len(of(q, ms[1].ID)) != 1 {
		t.Fatalf("claimed %v at 1 h", addresses(q))
	}
	if got, _ := list(acct.ID, 2); !slices.Equal(got, []string{ms[3].ID, ms[0].ID, ms[4].ID}) {
		t.Fatalf("after cancel and start, listed %v, want %v", got, []string{ms[3].ID, ms[0].ID, ms[4].ID})
	}
}

// RescheduleMessage moves the due time, later or earlier, of a message
// still scheduled and unclaimed of the account.
func testRescheduleMessage(t *testing.T, s mailroom.Store) {
	ctx := context.Background()
	acct, other := NewAccount(t, s, "acme"), NewAccount(t, s, "globex")
	sendingDomain(t, s, acct, "shop.example", mailroom.DomainVerified)
	Try(s.AddSuppression(ctx, &mailroom.Suppression{AccountID: acct.ID, Address: "z@x.example", Reason: mailroom.SuppressedManual, CreatedAt: t0})).Must(t)
	oldAt, newAt := t0.Add(time.Hour), t0.Add(2*time.Hour)
	later := newScheduledMessage(acct, oldAt, "a@x.example", "z@x.example")
	sooner := newScheduledMessage(acct, t0.Add(3*time.Hour), "b@x.example")
	accept(t, s, later, mailroom.MessageScheduled)
	accept(t, s, sooner, mailroom.MessageScheduled)

	if err := s.RescheduleMessage(ctx, acct.ID, later.ID, newAt, t0); err != nil {
		t.Fatal(err)
	}
	m, events := wantMessage(t, s, acct, later.ID, mailroom.MessageScheduled,
		map[string]mailroom.RecipientStatus{"a@x.example": mailroom.RecipientScheduled, "z@x.example": mailroom.RecipientSuppressed})
	if m.ScheduledAt == nil || !m.ScheduledAt.Equal(newAt) {
		t.Fatalf("scheduledAt %v after the move, want %v", m.ScheduledAt, newAt)
	}
	for _, r := range m.Recipients {
		want := &newAt
		if r.Status == mailroom.RecipientSuppressed {
			want = nil
		}
		if !sameTime(r.NextAttemptAt, want) {
			t.Fatalf("%s: next attempt %v, want %v", r.Address, r.NextAttemptAt, want)
		}
	}
	if len(events) != 2 {
		t.Fatalf("timeline %v after the move", eventTypes(events))
	}
	if list, _ := Try2(s.ListScheduled(ctx, acct.ID, mailroom.Page{})).Must(t); len(list) != 2 || list[0].ID != later.ID || !list[0].ScheduledAt.Equal(newAt) {
		t.Fatalf("the list does not show the move")
	}

	// Earlier works as well.
	if err := s.RescheduleMessage(ctx, acct.ID, sooner.ID, t0.Add(30*time.Minute), t0); err != nil {
		t.Fatal(err)
	}
	if q := claimAt(t, s, "node_a", t0.Add(30*time.Minute)); len(q) != 1 || q[0].MessageID != sooner.ID || !q[0].QueuedAt.Equal(t0.Add(30*time.Minute)) {
		t.Fatalf("claimed %v at the earlier time", addresses(q))
	}
	// Not at the old time; at the new one.
	if q := claimAt(t, s, "node_a", oldAt.Add(time.Minute)); len(of(q, later.ID)) != 0 {
		t.Fatalf("claimed %v at the old time", addresses(q))
	}
	q := claimAt(t, s, "node_a", newAt)
	if got := of(q, later.ID); len(got) != 1 || got[0].Address != "a@x.example" || !got[0].QueuedAt.Equal(newAt) {
		t.Fatalf("claimed %v at the new time", addresses(q))
	}

	// What cannot be moved.
	wantCode(t, s.RescheduleMessage(ctx, other.ID, later.ID, newAt, t0), mailroom.ECodeNotFound)
	wantCode(t, s.RescheduleMessage(ctx, acct.ID, mailroom.NewID(mailroom.PrefixMessage, t0), newAt, t0), mailroom.ECodeNotFound)
	now := NewMessage(acct, t0, "now@x.example")
	accept(t, s, now, mailroom.MessageQueued)
	wantCode(t, s.RescheduleMessage(ctx, acct.ID, now.ID, newAt, t0), mailroom.ECodeInvalidState)
	wantCode(t, s.RescheduleMessage(ctx, acct.ID, later.ID, newAt.Add(time.Hour), t0), mailroom.ECodeInvalidState)
	wantCode(t, s.RescheduleMessage(ctx, acct.ID, sooner.ID, newAt.Add(time.Hour), t0), mailroom.ECodeInvalidState)
	theirs := newScheduledMessage(other, oldAt, "c@x.example")
	accept(t, s, theirs, mailroom.MessageScheduled)
	wantCode(t, s.RescheduleMessage(ctx, acct.ID, theirs.ID, newAt, t0), mailroom.ECodeNotFound)
	if m, _ := messageOf(t, s, other.ID, theirs.ID); !m.ScheduledAt.Equal(oldAt) {
		t.Fatalf("another account moved the message to %v", m.ScheduledAt)
	}
	// A refused move changed nothing.
	if m, _ := messageOf(t, s, acct.ID, later.ID); !m.ScheduledAt.Equal(newAt) || m.Status != mailroom.MessageQueued {
		t.Fatalf("after a refused move: %s at %v", m.Status, m.ScheduledAt)
	}
}

// CancelMessage cancels a scheduled message for good, once.
func testCancelMessage(t *testing.T, s mailroom.Store) {
	ctx := context.Background()
	acct, other := NewAccount(t, s, "acme"), NewAccount(t, s, "globex")
	sendingDomain(t, s, acct, "shop.example", mailroom.DomainVerified)
	at, now := t0.Add(time.Hour), t0.Add(10*time.Minute)
	m := newScheduledMessage(acct, at, "a@x.example", "b@y.example")
	accept(t, s, m, mailroom.MessageScheduled)

	wantCode(t, s.CancelMessage(ctx, other.ID, m.ID, now), mailroom.ECodeNotFound)
	wantCode(t, s.CancelMessage(ctx, acct.ID, mailroom.NewID(mailroom.PrefixMessage, t0), now), mailroom.ECodeNotFound)
	if err := s.CancelMessage(ctx, acct.ID, m.ID, now); err != nil {
		t.Fatal(err)
	}
	got, events := wantMessage(t, s, acct, m.ID, mailroom.MessageCanceled,
		map[string]mailroom.RecipientStatus{"a@x.example": mailroom.RecipientCanceled, "b@y.example": mailroom.RecipientCanceled})
	for _, r := range got.Recipients {
		if r.NextAttemptAt != nil {
			t.Fatalf("%s: next attempt %v once canceled", r.Address, r.NextAttemptAt)
		}
		if tl := timeline(events, r.Address); !slices.Equal(tl, []string{mailroom.EventEmailScheduled, mailroom.EventEmailCanceled}) {
			t.Fatalf("%s: timeline %v", r.Address, tl)
		}
	}
	for _, e := range events {
		if e.Type == mailroom.EventEmailCanceled && (!e.CreatedAt.Equal(now) || e.AccountID != acct.ID || e.MessageID != m.ID) {
			t.Fatalf("canceled event %+v", e)
		}
	}
	if q := claimAt(t, s, "node_a", at.Add(1000*time.Hour)); len(q) != 0 {
		t.Fatalf("claimed %v of a canceled message", addresses(q))
	}
	wantCode(t, s.CancelMessage(ctx, acct.ID, m.ID, now), mailroom.ECodeInvalidState)
	wantCode(t, s.RescheduleMessage(ctx, acct.ID, m.ID, at, t0), mailroom.ECodeInvalidState)
	if _, events := messageOf(t, s, acct.ID, m.ID); len(events) != 4 {
		t.Fatalf("timeline %v after a second cancel", eventTypes(events))
	}
	if page, _ := Try2(s.ListMessages(ctx, acct.ID, mailroom.MessageFilter{Status: mailroom.MessageCanceled}, mailroom.Page{})).Must(t); len(page) != 1 {
		t.Fatalf("%d canceled messages in the log", len(page))
	}
	if list, _ := Try2(s.ListScheduled(ctx, acct.ID, mailroom.Page{})).Must(t); len(list) != 0 {
		t.Fatalf("a canceled message is listed as scheduled")
	}

	// One recipient suppressed at the accept stays so.
	Try(s.AddSuppression(ctx, &mailroom.Suppression{AccountID: acct.ID, Address: "z@x.example", Reason: mailroom.SuppressedManual, CreatedAt: t0})).Must(t)
	mixed := newScheduledMessage(acct, at, "a@x.example", "Z@x.example")
	accept(t, s, mixed, mailroom.MessageScheduled)
	if err := s.CancelMessage(ctx, acct.ID, mixed.ID, now); err != nil {
		t.Fatal(err)
	}
	_, events = wantMessage(t, s, acct, mixed.ID, mailroom.MessageCanceled,
		map[string]mailroom.RecipientStatus{"a@x.example": mailroom.RecipientCanceled, "Z@x.example": mailroom.RecipientSuppressed})
	if tl := timeline(events, "Z@x.example"); !slices.Equal(tl, []string{mailroom.EventEmailSuppressed}) {
		t.Fatalf("suppressed recipient's timeline %v", tl)
	}
	if tl := timeline(events, "a@x.example"); !slices.Equal(tl, []string{mailroom.EventEmailScheduled, mailroom.EventEmailCanceled}) {
		t.Fatalf("canceled recipient's timeline %v", tl)
	}

	// A message sent at once is not scheduled.
	queued := NewMessage(acct, t0, "q@x.example")
	accept(t, s, queued, mailroom.MessageQueued)
	wantCode(t, s.CancelMessage(ctx, acct.ID, queued.ID, now), mailroom.ECodeInvalidState)
	wantMessage(t, s, acct, queued.ID, mailroom.MessageQueued, map[string]mailroom.RecipientStatus{"q@x.example": mailroom.RecipientQueued})
	// Another account's cancel left its message alone.
	theirs := newScheduledMessage(other, at, "c@x.example")
	accept(t, s, theirs, mailroom.MessageScheduled)
	wantCode(t, s.CancelMessage(ctx, acct.ID, theirs.ID, now), mailroom.ECodeNotFound)
	wantMessage(t, s, other, theirs.ID, mailroom.MessageScheduled, map[string]mailroom.RecipientStatus{"c@x.example": mailroom.RecipientScheduled})
}

// raceIterations is how many times each race is run per engine.
const raceIterations = 200

// A cancel and a claim of a message that is due, at once: exactly one of
// them has it. Either the cancel succeeds and the claim gets none of its
// recipients, or the claim gets them all, queued, and the cancel is
// refused (docs: both take the message's lock).
func testCancelRacesClaim(t *testing.T, s mailroom.Store) {
	raceClaim(t, s, "cancel", func(ctx context.Context, acct *mailroom.Account, id string, due time.Time) error {
		return s.CancelMessage(ctx, acct.ID, id, due)
	}, func(t *testing.T, acct *mailroom.Account, m *mailroom.Message, _ time.Time) {
		wantMessage(t, s, acct, m.ID, mailroom.MessageCanceled,
			map[string]mailroom.RecipientStatus{"a@x.example": mailroom.RecipientCanceled, "b@y.example": mailroom.RecipientCanceled})
	})
}

// The same race with a reschedule an hour later: either the message moved
// (and the claim got nothing), or it was claimed (and the move refused).
func testRescheduleRacesClaim(t *testing.T, s mailroom.Store) {
	raceClaim(t, s, "reschedule", func(ctx context.Context, acct *mailroom.Account, id string, due time.Time) error {
		return s.RescheduleMessage(ctx, acct.ID, id, due.Add(time.Hour), t0)
	}, func(t *testing.T, acct *mailroom.Account, m *mailroom.Message, due time.Time) {
		got, _ := wantMessage(t, s, acct, m.ID, mailroom.MessageScheduled,
			map[string]mailroom.RecipientStatus{"a@x.example": mailroom.RecipientScheduled, "b@y.example": mailroom.RecipientScheduled})
		if !got.ScheduledAt.Equal(due.Add(time.Hour)) {
			t.Fatalf("moved to %v, want %v", got.ScheduledAt, due.Add(time.Hour))
		}
		for _, r := range got.Recipients {
			if r.NextAttemptAt == nil || !r.NextAttemptAt.Equal(due.Add(time.Hour)) {
				t.Fatalf("%s: next attempt %v after the move", r.Address, r.NextAttemptAt)
			}
		}
	})
}

// raceClaim runs change and a claim at once on a message that is due, many
// times: change must either succeed (then changed checks the message and
// the claim must have none of it) or be refused with ECodeInvalidState
// (then the claim must have all of it, and the message be queued).
func raceClaim(t *testing.T, s mailroom.Store, what string,
	change func(ctx context.Context, acct *mailroom.Account, id string, due time.Time) error,
	changed func(t *testing.T, acct *mailroom.Account, m *mailroom.Message, due time.Time)) {
	ctx := context.Background()
	acct := NewAccount(t, s, "acme")
	sendingDomain(t, s, acct, "shop.example", mailroom.DomainVerified)
	due := t0.Add(time.Hour)
	wins := map[string]int{}
	for i := range raceIterations {
		m := newScheduledMessage(acct, due, "a@x.example", "b@y.example")
		accept(t, s, m, mailroom.MessageScheduled)
		var (
			wg                  sync.WaitGroup
			start               = make(chan struct{})
			changeErr, claimErr error
			claimed             []*mailroom.QueuedRecipient
		)
		wg.Go(func() {
			<-start
			changeErr = change(ctx, acct, m.ID, due)
		})
		// Half the time the claim starts a little late, so that either
		// side comes first often enough (on SQLite the claim, which
		// needs no trip through the group committer, would nearly always
		// be first).
		var delay time.Duration
		if i%2 == 1 {
			delay = rand.N(2 * time.Millisecond)
		}
		wg.Go(func() {
			<-start
			time.Sleep(delay)
			claimed, claimErr = s.ClaimDueRecipients(ctx, mailroom.Claim{Node: "node_a", Now: due, Lease: time.Hour, Limit: 10})
		})
		close(start)
		wg.Wait()
		if claimErr != nil {
			t.Fatalf("iteration %d: claim: %v", i, claimErr)
		}
		mine := of(claimed, m.ID)
		if len(mine) != len(claimed) {
			t.Fatalf("iteration %d: the claim took %d recipients of other messages", i, len(claimed)-len(mine))
		}
		switch {
		case changeErr == nil:
			if len(mine) != 0 {
				t.Fatalf("iteration %d: both won: the %s succeeded and the claim took %v", i, what, addresses(mine))
			}
			changed(t, acct, m, due)
			wins[what]++
		case mailroom.ErrorCode(changeErr) == mailroom.ECodeInvalidState:
			if len(mine) != 2 {
				t.Fatalf("iteration %d: neither won: the %s was refused (%v) and the claim took %v", i, what, changeErr, addresses(mine))
			}
			for _, q := range mine {
				if q.Status != mailroom.RecipientQueued {
					t.Fatalf("iteration %d: claimed %s %s", i, q.Address, q.Status)
				}
			}
			wantMessage(t, s, acct, m.ID, mailroom.MessageQueued,
				map[string]mailroom.RecipientStatus{"a@x.example": mailroom.RecipientQueued, "b@y.example": mailroom.RecipientQueued})
			wins["claim"]++
		default:
			t.Fatalf("iteration %d: %s: %v", i, what, changeErr)
		}
	}
	t.Logf("%d races: %v", raceIterations, wins)
}
