package storetest

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/mailroom/mailroom"
)

// The webhook outbox: claims under leases, outcomes, releases and the
// backlog.

func init() {
	extraSuites = append(extraSuites,
		suite{"WebhookClaimLease", testWebhookClaimLease},
		suite{"WebhookClaimPerEndpoint", testWebhookClaimPerEndpoint},
		suite{"WebhookClaimBusyEndpointDoesNotCrowdOutOthers", testWebhookClaimBusyEndpoint},
		suite{"WebhookClaimSkipEndpoints", testWebhookClaimSkipEndpoints},
		suite{"WebhookClaimConcurrent", testWebhookClaimConcurrent},
		suite{"WebhookOutcomes", testWebhookOutcomes},
		suite{"WebhookSupersededOutcome", testWebhookSupersededOutcome},
		suite{"WebhookOutcomeAfterDisable", testWebhookOutcomeAfterDisable},
		suite{"WebhookDisabledAfterFailing", testWebhookDisabledAfterFailing},
		suite{"WebhookRelease", testWebhookRelease},
		suite{"WebhookBacklog", testWebhookBacklog},
	)
}

// outcome is attempt number n of d, made at at and answered with code (0:
// no answer): a success when code is a 2xx. next is the retry, nil after
// a success or the last attempt.
func outcome(d *mailroom.WebhookDelivery, n, code int, at time.Time, next *time.Time) *mailroom.WebhookOutcome {
	a := &mailroom.WebhookAttempt{ID: mailroom.NewID(mailroom.PrefixWebhookAttempt, at), EventID: d.Event.ID,
		EventType: d.Event.Type, Attempt: n, StatusCode: code, Duration: 250 * time.Millisecond,
		ResponseBody: fmt.Sprintf("answer %d", code), CreatedAt: at, NextAttemptAt: next}
	if code >= 200 && code < 300 {
		a.Status = mailroom.WebhookAttemptSucceeded
	} else {
		a.Status, a.Error = mailroom.WebhookAttemptFailed, fmt.Sprintf("the endpoint answered %d", code)
		if code == 0 {
			a.Error, a.ResponseBody = "connection refused", ""
		}
	}
	return &mailroom.WebhookOutcome{Delivery: d, Attempt: a}
}

// record records outcomes, disabling the endpoints failing since
// disableBefore.
func record(t *testing.T, s mailroom.Store, disableBefore time.Time, outcomes ...*mailroom.WebhookOutcome) {
	t.Helper()
	if err := s.RecordWebhookOutcomes(context.Background(), outcomes, disableBefore); err != nil {
		t.Fatalf("record webhook outcomes: %v", err)
	}
}

// claimFor claims with c's fields, node_a, now and a minute's lease.
func claimFor(t *testing.T, s mailroom.Store, now time.Time, c mailroom.WebhookClaim) []*mailroom.WebhookDelivery {
	t.Helper()
	c.Node, c.Now, c.Lease = "node_a", now, time.Minute
	return Try(s.ClaimWebhookDeliveries(context.Background(), c)).Must(t)
}

func testWebhookClaimLease(t *testing.T, s mailroom.Store) {
	acme := NewAccount(t, s, "acme")
	hook := addWebhook(t, s, acme, mailroom.AllEventTypes)
	ev := queueTo(t, s, acme, t0, hook)
	if got := claimHooks(t, s, t0.Add(-time.Millisecond)); len(got) != 0 {
		t.Fatal("a delivery was claimed before it was due")
	}
	first := claimHooks(t, s, t0)
	if len(first) != 1 || first[0].Event.ID != ev.ID || first[0].Endpoint.ID != hook.ID || first[0].ClaimToken == "" {
		t.Fatalf("first claim: %d deliveries", len(first))
	}
	// Held for the lease, by this node as by any other.
	for _, at := range []time.Time{t0, t0.Add(30 * time.Second), t0.Add(time.Minute - time.Microsecond)} {
		if got := claimHooks(t, s, at); len(got) != 0 {
			t.Fatalf("claimed again at %v, inside the lease", at.Sub(t0))
		}
	}
	// Its node died: another claims it once the lease ends, under a new
	// token.
	second := claimHooks(t, s, t0.Add(time.Minute))
	if len(second) != 1 || second[0].ID != first[0].ID || second[0].ClaimToken == first[0].ClaimToken || second[0].Attempts != 0 {
		t.Fatalf("after the lease: %d deliveries (token %q, first %q)", len(second), tokenOf(second), first[0].ClaimToken)
	}
}

func tokenOf(ds []*mailroom.WebhookDelivery) string {
	if len(ds) == 0 {
		return ""
	}
	return ds[0].ClaimToken
}

// PerEndpoint caps one endpoint's share of a claim.
func testWebhookClaimPerEndpoint(t *testing.T, s mailroom.Store) {
	acme := NewAccount(t, s, "acme")
	a, b := addWebhook(t, s, acme, mailroom.AllEventTypes), addWebhook(t, s, acme, mailroom.AllEventTypes)
	for i := range 5 {
		queueTo(t, s, acme, t0.Add(time.Duration(i)*time.Millisecond), a, b)
	}
	got := byEndpoint(claimFor(t, s, t0.Add(time.Second), mailroom.WebhookClaim{Limit: 100, PerEndpoint: 2}))
	if len(got[a.ID]) != 2 || len(got[b.ID]) != 2 {
		t.Fatalf("PerEndpoint 2 claimed %d and %d, want 2 each", len(got[a.ID]), len(got[b.ID]))
	}
	// The rest are not held by that claim.
	got = byEndpoint(claimFor(t, s, t0.Add(time.Second), mailroom.WebhookClaim{Limit: 100}))
	if len(got[a.ID]) != 3 || len(got[b.ID]) != 3 {
		t.Fatalf("the next claim got %d and %d, want the 3 left of each", len(got[a.ID]), len(got[b.ID]))
	}
}

// An endpoint with a long backlog (it was down) takes its PerEndpoint
// share of a claim, and the deliveries of others, though due later, fill
// the rest: a busy endpoint must not hold back the others.
func testWebhookClaimBusyEndpoint(t *testing.T, s mailroom.Store) {
	acme := NewAccount(t, s, "acme")
	busy, quiet := addWebhook(t, s, acme, mailroom.AllEventTypes), addWebhook(t, s, acme, mailroom.AllEventTypes)
	for i := range 10 {
		queueTo(t, s, acme, t0.Add(time.Duration(i)*time.Millisecond), busy)
	}
	for i := range 3 {
		queueTo(t, s, acme, t0.Add(time.Second+time.Duration(i)*time.Millisecond), quiet)
	}
	got := byEndpoint(claimFor(t, s, t0.Add(time.Minute), mailroom.WebhookClaim{Limit: 6, PerEndpoint: 2}))
	if len(got[busy.ID]) != 2 || len(got[quiet.ID]) != 2 {
		t.Fatalf("a claim of 6, at most 2 per endpoint, got %d of the busy endpoint's deliveries and %d of the other's; want 2 of each",
			len(got[busy.ID]), len(got[quiet.ID]))
	}
}

func testWebhookClaimSkipEndpoints(t *testing.T, s mailroom.Store) {
	acme := NewAccount(t, s, "acme")
	a, b, c := addWebhook(t, s, acme, "*"), addWebhook(t, s, acme, "*"), addWebhook(t, s, acme, "*")
	queueTo(t, s, acme, t0, a, b, c)
	queueTo(t, s, acme, t0, a, b, c)
	got := byEndpoint(claimFor(t, s, t0, mailroom.WebhookClaim{Limit: 100, SkipEndpoints: []string{a.ID, c.ID}}))
	if len(got) != 1 || len(got[b.ID]) != 2 {
		t.Fatalf("skipping two endpoints, the claim reached %d endpoints (%d of the third's)", len(got), len(got[b.ID]))
	}
	if rest := claimFor(t, s, t0, mailroom.WebhookClaim{Limit: 100, SkipEndpoints: []string{a.ID, b.ID, c.ID}}); len(rest) != 0 {
		t.Fatalf("skipping every endpoint claimed %d", len(rest))
	}
	got = byEndpoint(claimFor(t, s, t0, mailroom.WebhookClaim{Limit: 100}))
	if len(got[a.ID]) != 2 || len(got[c.ID]) != 2 || len(got[b.ID]) != 0 {
		t.Fatalf("the skipped deliveries waited: got %d, %d, %d", len(got[a.ID]), len(got[b.ID]), len(got[c.ID]))
	}
}

// Eight nodes claiming at once never take one delivery twice (SKIP LOCKED
// on PostgreSQL).
func testWebhookClaimConcurrent(t *testing.T, s mailroom.Store) {
	ctx := context.Background()
	acme := NewAccount(t, s, "acme")
	addWebhook(t, s, acme, mailroom.AllEventTypes)
	addWebhook(t, s, acme, mailroom.AllEventTypes)
	var ms []*mailroom.Message
	for i := range 100 {
		ms = append(ms, NewMessage(acme, t0, fmt.Sprintf("r%d@x.example", i)))
	}
	acceptAll(t, s, ms)
	seen := map[string]int{}
	for _, d := range claimConcurrently(t, 8, func() ([]*mailroom.WebhookDelivery, error) {
		return s.ClaimWebhookDeliveries(ctx, mailroom.WebhookClaim{Node: "node_x", Now: t0, Lease: time.Hour, Limit: 7, PerEndpoint: 4})
	}) {
		seen[d.ID]++
		if seen[d.ID] > 1 {
			t.Fatalf("delivery %s claimed twice", d.ID)
		}
	}
	if len(seen) != 200 {
		t.Fatalf("claimed %d distinct deliveries, want all 200", len(seen))
	}
}

func testWebhookOutcomes(t *testing.T, s mailroom.Store) {
	ctx := context.Background()
	acme := NewAccount(t, s, "acme")
	hook := addWebhook(t, s, acme, mailroom.AllEventTypes)
	ev := queueTo(t, s, acme, t0, hook)
	d := claimHooks(t, s, t0)[0]

	// A failure: logged, the delivery due again at its next attempt and
	// not before, the endpoint failing since.
	retry := t0.Add(5 * time.Minute)
	first := outcome(d, 1, 500, t0.Add(time.Second), &retry)
	record(t, s, never, first)
	logged := allAttempts(t, s, acme.ID, hook.ID, mailroom.WebhookAttemptFilter{})
	if len(logged) != 1 {
		t.Fatalf("%d attempts logged, want 1", len(logged))
	}
	sameAttempt(t, logged[0], first, d)
	if e := Try(s.Webhook(ctx, acme.ID, hook.ID)).Must(t); !sameTime(e.FailingSince, &first.Attempt.CreatedAt) || !e.Enabled {
		t.Fatalf("after a failure, failing since %v (enabled %v), want %v", e.FailingSince, e.Enabled, first.Attempt.CreatedAt)
	}
	if got := claimHooks(t, s, retry.Add(-time.Microsecond)); len(got) != 0 {
		t.Fatal("a failed delivery was claimed before its next attempt")
	}
	again := claimHooks(t, s, retry)
	if len(again) != 1 || again[0].ID != d.ID || again[0].Attempts != 1 || again[0].Event.ID != ev.ID {
		t.Fatalf("at its next attempt: %d deliveries, attempts %v", len(again), again)
	}

	// A second failure (no answer) keeps the time it began failing.
	retry2 := t0.Add(40 * time.Minute)
	record(t, s, never, outcome(again[0], 2, 0, retry.Add(time.Second), &retry2))
	if e := Try(s.Webhook(ctx, acme.ID, hook.ID)).Must(t); !sameTime(e.FailingSince, &first.Attempt.CreatedAt) {
		t.Fatalf("a second failure moved failing since to %v", e.FailingSince)
	}

	// A success removes the delivery and clears the failing time.
	third := claimHooks(t, s, retry2)
	if len(third) != 1 || third[0].Attempts != 2 {
		t.Fatalf("third claim: %d deliveries", len(third))
	}
	ok := outcome(third[0], 3, 204, retry2.Add(time.Second), nil)
	record(t, s, never, ok)
	if n := backlog(t, s); n != 0 {
		t.Fatalf("after a success, %d deliveries pending", n)
	}
	if got := claimHooks(t, s, t0.Add(48*time.Hour)); len(got) != 0 {
		t.Fatal("a delivered webhook was claimed again")
	}
	if e := Try(s.Webhook(ctx, acme.ID, hook.ID)).Must(t); e.FailingSince != nil {
		t.Fatalf("a success left failing since %v", e.FailingSince)
	}
	logged = allAttempts(t, s, acme.ID, hook.ID, mailroom.WebhookAttemptFilter{})
	if len(logged) != 3 || logged[0].Attempt != 3 || logged[1].Attempt != 2 || logged[2].Attempt != 1 {
		t.Fatalf("attempts log: %d entries, want 3 newest first", len(logged))
	}
	sameAttempt(t, logged[0], ok, third[0])
	if logged[1].StatusCode != 0 || logged[1].Error != "connection refused" || !sameTime(logged[1].NextAttemptAt, &retry2) {
		t.Fatalf("the unanswered attempt: %+v", logged[1])
	}

	// The last attempt fails: given up, removed, logged with no next.
	queueTo(t, s, acme, t0.Add(time.Hour), hook)
	last := claimHooks(t, s, t0.Add(time.Hour))[0]
	gaveUp := outcome(last, 8, 503, t0.Add(time.Hour+time.Second), nil)
	record(t, s, never, gaveUp)
	if n := backlog(t, s); n != 0 {
		t.Fatalf("a delivery given up is still pending (%d)", n)
	}
	logged = allAttempts(t, s, acme.ID, hook.ID, mailroom.WebhookAttemptFilter{})
	sameAttempt(t, logged[0], gaveUp, last)
	if e := Try(s.Webhook(ctx, acme.ID, hook.ID)).Must(t); !sameTime(e.FailingSince, &gaveUp.Attempt.CreatedAt) {
		t.Fatalf("failing since %v, want %v", e.FailingSince, gaveUp.Attempt.CreatedAt)
	}
}

// sameAttempt checks a listed attempt against the outcome recorded for d.
func sameAttempt(t *testing.T, got *mailroom.WebhookAttempt, o *mailroom.WebhookOutcome, d *mailroom.WebhookDelivery) {
	t.Helper()
	a := o.Attempt
	if got.ID != a.ID || got.AccountID != d.AccountID || got.EndpointID != d.EndpointID || got.DeliveryID != d.ID ||
		got.EventID != d.Event.ID || got.EventType != d.Event.Type || got.Attempt != a.Attempt || got.Status != a.Status ||
		got.StatusCode != a.StatusCode || got.Error != a.Error || got.Duration != a.Duration || got.ResponseBody != a.ResponseBody ||
		!got.CreatedAt.Equal(a.CreatedAt) || !sameTime(got.NextAttemptAt, a.NextAttemptAt) {
		t.Fatalf("logged attempt differs:\n got %+v\nwant %+v", got, a)
	}
}

// An outcome recorded under a claim that another has since replaced
// (its lease ran out) is logged, for the attempt was made, but changes
// nothing: no next attempt, no failing time, the delivery kept.
func testWebhookSupersededOutcome(t *testing.T, s mailroom.Store) {
	ctx := context.Background()
	acme := NewAccount(t, s, "acme")
	hook := addWebhook(t, s, acme, mailroom.AllEventTypes)
	queueTo(t, s, acme, t0, hook)
	stale := claimHooks(t, s, t0)[0]
	current := claimHooks(t, s, t0.Add(time.Minute))[0]

	retry := t0.Add(time.Hour)
	record(t, s, t0.Add(time.Hour), outcome(stale, 1, 500, t0.Add(61*time.Second), &retry))
	record(t, s, never, outcome(stale, 1, 200, t0.Add(62*time.Second), nil))
	got := allAttempts(t, s, acme.ID, hook.ID, mailroom.WebhookAttemptFilter{})
	if len(got) != 2 {
		t.Fatalf("superseded outcomes logged %d attempts, want both", len(got))
	}
	for _, a := range got {
		if a.NextAttemptAt != nil {
			t.Fatalf("a superseded attempt was logged with a next attempt at %v", a.NextAttemptAt)
		}
	}
	if e := Try(s.Webhook(ctx, acme.ID, hook.ID)).Must(t); e.FailingSince != nil || !e.Enabled {
		t.Fatalf("a superseded failure marked the endpoint: failing since %v, enabled %v", e.FailingSince, e.Enabled)
	}
	if n := backlog(t, s); n != 1 {
		t.Fatalf("a superseded success removed the delivery (%d pending)", n)
	}
	// The current claim's outcome counts.
	record(t, s, never, outcome(current, 1, 200, t0.Add(63*time.Second), nil))
	if n := backlog(t, s); n != 0 {
		t.Fatalf("the current claim's success left %d pending", n)
	}
}

// An endpoint that has failed every attempt since disableBefore is turned
// off, its pending deliveries dropped; others are untouched.
func testWebhookDisabledAfterFailing(t *testing.T, s mailroom.Store) {
	ctx := context.Background()
	acme := NewAccount(t, s, "acme")
	flaky, healthy := addWebhook(t, s, acme, mailroom.AllEventTypes), addWebhook(t, s, acme, mailroom.AllEventTypes)
	for i := range 3 {
		queueTo(t, s, acme, t0.Add(time.Duration(i)*time.Second), flaky)
	}
	queueTo(t, s, acme, t0, healthy)
	ds := byEndpoint(claimHooks(t, s, t0.Add(2*time.Second)))[flaky.ID]
	slices.SortFunc(ds, func(a, b *mailroom.WebhookDelivery) int { return a.CreatedAt.Compare(b.CreatedAt) })
	if len(ds) != 3 {
		t.Fatalf("claimed %d of flaky's deliveries, want 3", len(ds))
	}

	began := t0.Add(3 * time.Second)
	retry := t0.Add(30 * 24 * time.Hour)
	record(t, s, began.Add(-mailroom.WebhookDisableAfter), outcome(ds[0], 1, 500, began, &retry))
	// Failing for just under the limit: still on.
	at := began.Add(mailroom.WebhookDisableAfter - time.Microsecond)
	record(t, s, at.Add(-mailroom.WebhookDisableAfter), outcome(ds[1], 1, 500, at, &retry))
	if e := Try(s.Webhook(ctx, acme.ID, flaky.ID)).Must(t); !e.Enabled || e.DisabledReason != "" || !sameTime(e.FailingSince, &began) {
		t.Fatalf("failing for less than the limit: enabled %v (%q), failing since %v", e.Enabled, e.DisabledReason, e.FailingSince)
	}
	if n := backlog(t, s); n != 4 {
		t.Fatalf("%d pending, want 4", n)
	}
	// Failing for the limit: off.
	at = began.Add(mailroom.WebhookDisableAfter)
	last := outcome(ds[2], 1, 500, at, &retry)
	record(t, s, at.Add(-mailroom.WebhookDisableAfter), last)
	e := Try(s.Webhook(ctx, acme.ID, flaky.ID)).Must(t)
	if e.Enabled || e.DisabledReason == "" {
		t.Fatalf("failing for %v: enabled %v, reason %q", mailroom.WebhookDisableAfter, e.Enabled, e.DisabledReason)
	}
	if n := backlog(t, s); n != 1 {
		t.Fatalf("after disabling, %d deliveries pending, want healthy's 1", n)
	}
	if got := allAttempts(t, s, acme.ID, flaky.ID, mailroom.WebhookAttemptFilter{}); len(got) != 3 || got[0].ID != last.Attempt.ID {
		t.Fatalf("the attempt that disabled the endpoint was not logged: %d attempts", len(got))
	}
	if h := Try(s.Webhook(ctx, acme.ID, healthy.ID)).Must(t); !h.Enabled || h.FailingSince != nil {
		t.Fatalf("the healthy endpoint was touched: %+v", h)
	}
	// Events while it is off go to the others alone.
	Try(s.AcceptMessage(ctx, NewMessage(acme, at, "a@x.example"))).Must(t)
	got := byEndpoint(claimHooks(t, s, retry))
	if len(got[flaky.ID]) != 0 || len(got[healthy.ID]) != 2 {
		t.Fatalf("claims after disabling: %d to the disabled endpoint, %d to the healthy one (want 0 and 2)",
			len(got[flaky.ID]), len(got[healthy.ID]))
	}
}

func testWebhookRelease(t *testing.T, s mailroom.Store) {
	ctx := context.Background()
	acme := NewAccount(t, s, "acme")
	hook := addWebhook(t, s, acme, mailroom.AllEventTypes)
	queueTo(t, s, acme, t0, hook)
	now := t0.Add(10 * time.Second)
	held := claimHooks(t, s, now)
	if len(held) != 1 || !held[0].DueAt.Equal(t0) {
		t.Fatalf("claimed %v, want one delivery due at t0", held)
	}
	if err := s.ReleaseWebhookClaims(ctx, held); err != nil {
		t.Fatal(err)
	}
	if got := claimHooks(t, s, t0.Add(-time.Millisecond)); len(got) != 0 {
		t.Fatal("a released delivery became due before its time")
	}
	again := claimHooks(t, s, t0)
	if len(again) != 1 || again[0].ID != held[0].ID || !again[0].DueAt.Equal(t0) || again[0].Attempts != 0 {
		t.Fatalf("after the release, claimed %v, want the delivery due at t0 again", again)
	}
	// Releasing under the old token does not free the new claim.
	if err := s.ReleaseWebhookClaims(ctx, held); err != nil {
		t.Fatal(err)
	}
	if got := claimHooks(t, s, t0.Add(30*time.Second)); len(got) != 0 {
		t.Fatal("a superseded release freed the current claim")
	}
}

// backlogOf is the backlog's size and its oldest delivery's creation.
func backlogOf(t *testing.T, s mailroom.Store) (int, time.Time) {
	t.Helper()
	n, oldest, err := s.WebhookBacklog(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return n, oldest
}

func testWebhookBacklog(t *testing.T, s mailroom.Store) {
	acme := NewAccount(t, s, "acme")
	hook := addWebhook(t, s, acme, mailroom.AllEventTypes)
	if n, oldest := backlogOf(t, s); n != 0 || !oldest.IsZero() {
		t.Fatalf("empty backlog: %d, oldest %v", n, oldest)
	}
	queueTo(t, s, acme, t0.Add(time.Second), hook)
	queueTo(t, s, acme, t0, hook)
	queueTo(t, s, acme, t0.Add(2*time.Second), hook)
	if n, oldest := backlogOf(t, s); n != 3 || !oldest.Equal(t0) {
		t.Fatalf("backlog %d, oldest %v; want 3, %v", n, oldest, t0)
	}
	// Claimed deliveries are still pending; a delivered one is not.
	ds := claimHooks(t, s, t0.Add(2*time.Second))
	if n, _ := backlogOf(t, s); n != 3 {
		t.Fatalf("after a claim, backlog %d, want 3", n)
	}
	for _, d := range ds {
		if d.CreatedAt.Equal(t0) {
			record(t, s, never, outcome(d, 1, 200, t0.Add(3*time.Second), nil))
		}
	}
	if n, oldest := backlogOf(t, s); n != 2 || !oldest.Equal(t0.Add(time.Second)) {
		t.Fatalf("after delivering the oldest, backlog %d, oldest %v", n, oldest)
	}
}

// An attempt in flight when its endpoint is turned off still shows in the
// endpoint's log (it reached the endpoint, or tried to), with no next
// attempt: the delivery was dropped with the others.
func testWebhookOutcomeAfterDisable(t *testing.T, s mailroom.Store) {
	ctx := context.Background()
	acme := NewAccount(t, s, "acme")
	hook := addWebhook(t, s, acme, mailroom.AllEventTypes)
	queueTo(t, s, acme, t0, hook)
	inFlight := claimHooks(t, s, t0)[0]
	off := false
	Try(s.UpdateWebhook(ctx, acme.ID, hook.ID, mailroom.WebhookChange{Enabled: &off, DisabledReason: "off"}, t0)).Must(t)
	retry := t0.Add(time.Hour)
	record(t, s, never, outcome(inFlight, 1, 500, t0.Add(time.Second), &retry))
	got := allAttempts(t, s, acme.ID, hook.ID, mailroom.WebhookAttemptFilter{})
	if len(got) != 1 || got[0].StatusCode != 500 || got[0].NextAttemptAt != nil {
		t.Fatalf("the attempt in flight at the disable: %d logged (%+v)", len(got), got)
	}
	if n := backlog(t, s); n != 0 {
		t.Fatalf("the outcome brought back %d deliveries of a disabled endpoint", n)
	}
}
