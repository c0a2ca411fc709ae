package storetest

import (
	"context"
	"testing"
	"time"

	"github.com/mailroom/mailroom"
	"github.com/mailroom/mailroom/poll"
)

func init() {
	extraSuites = append(extraSuites,
		suite{"NodesAndDeadClaims", testNodesAndDeadClaims},
		suite{"ClaimLeaseInDatabaseTime", testClaimLease},
		suite{"ClaimSkipsBusyDomains", testClaimSkipsDomains},
		suite{"ReleaseClaims", testReleaseClaims},
	)
}

// Nodes beat; the claims of a node whose heartbeat is stale are released
// for any node, and the node itself is forgotten until it beats again.
func testNodesAndDeadClaims(t *testing.T, s mailroom.Store) {
	ctx := context.Background()
	acct := NewAccount(t, s, "acme")
	for _, to := range []string{"a@x.example", "b@y.example"} {
		Try(s.AcceptMessage(ctx, NewMessage(acct, t0, to))).Must(t)
	}
	a := &mailroom.Node{ID: "node_a", Hostname: "a", StartedAt: t0}
	b := &mailroom.Node{ID: "node_b", Hostname: "b", StartedAt: t0}
	if n := Try(s.Heartbeat(ctx, a)).Must(t); n != 1 {
		t.Fatalf("%d live nodes after the first beat, want 1", n)
	}
	if n := Try(s.Heartbeat(ctx, b)).Must(t); n != 2 {
		t.Fatalf("%d live nodes, want 2", n)
	}
	held := Try(claim(s, a.ID, t0, 10)).Must(t)
	if len(held) != 2 {
		t.Fatalf("node a claimed %d, want 2", len(held))
	}
	// Heartbeats a minute old are not stale when an hour is allowed.
	if n := Try(s.ReleaseLostClaims(ctx, time.Hour)).Must(t); n != 0 {
		t.Fatalf("released %d claims of live nodes", n)
	}
	if got := Try(claim(s, b.ID, t0, 10)).Must(t); len(got) != 0 {
		t.Fatalf("node b claimed %d recipients that node a holds", len(got))
	}
	// With a microsecond allowed, both beats go stale at once.
	released := 0
	poll.Until(t, 10*time.Second, "node a's claims released", func() bool {
		released += Try(s.ReleaseLostClaims(ctx, time.Microsecond)).Must(t)
		return released == 2
	})
	if n := Try(s.Heartbeat(ctx, b)).Must(t); n != 1 {
		t.Fatalf("%d live nodes after node a was forgotten, want 1", n)
	}
	if got := Try(claim(s, b.ID, t0, 10)).Must(t); len(got) != 2 {
		t.Fatalf("node b claimed %d of the dead node's recipients, want 2", len(got))
	}
	// A late outcome of the dead node's claim is dropped.
	r := held[0].Recipient
	r.Status, r.Attempts = mailroom.RecipientDelivered, 1
	if err := s.RecordAttempts(ctx, []*mailroom.Attempt{{Recipient: &r, Message: held[0].Message, ClaimToken: held[0].ClaimToken,
		Event: mailroom.NewEmailEvent(held[0].Message, &r, mailroom.EventEmailDelivered, t0)}}); err != nil {
		t.Fatal(err)
	}
	m, events, err := s.Message(ctx, acct.ID, held[0].MessageID)
	if err != nil {
		t.Fatal(err)
	}
	if m.Recipients[0].Status != mailroom.RecipientQueued || len(events) != 1 {
		t.Fatalf("a released claim's outcome was recorded: %s, %v", m.Recipients[0].Status, eventTypes(events))
	}
	// Claims of a node with no row (it never joined, or its row was removed
	// by hand) are released too, not left to their lease.
	Try(s.AcceptMessage(ctx, NewMessage(acct, t0, "c@z.example"))).Must(t)
	ghost := Try(claim(s, "node_ghost", t0, 10)).Must(t)
	if len(ghost) != 1 {
		t.Fatalf("the ghost claimed %d, want 1", len(ghost))
	}
	if n := Try(s.ReleaseLostClaims(ctx, time.Hour)).Must(t); n != 1 {
		t.Fatalf("released %d claims of a node without a row, want 1", n)
	}
	// On storage only one node uses, everything is released at its start.
	if got := Try(claim(s, b.ID, t0, 10)).Must(t); len(got) != 1 {
		t.Fatalf("node b claimed %d of the ghost's recipients, want 1", len(got))
	}
	if n := Try(s.ReleaseAllClaims(ctx)).Must(t); n != 3 {
		t.Fatalf("ReleaseAllClaims released %d, want node b's 3", n)
	}
}

// A claim's lease runs in the database's clock: the claiming node's clock
// (Claim.Now, here an hour ahead) cannot shorten it, and once it ends the
// sweep releases the claim although its node still beats (a stuck worker).
func testClaimLease(t *testing.T, s mailroom.Store) {
	ctx := context.Background()
	acct := NewAccount(t, s, "acme")
	Try(s.AcceptMessage(ctx, NewMessage(acct, t0, "a@x.example"))).Must(t)
	Try(s.Heartbeat(ctx, &mailroom.Node{ID: "node_a", Hostname: "a", StartedAt: t0})).Must(t)
	first := Try(s.ClaimDueRecipients(ctx, mailroom.Claim{Node: "node_a", Now: t0, Lease: 50 * time.Millisecond, Limit: 10})).Must(t)
	if len(first) != 1 {
		t.Fatalf("claimed %d, want 1", len(first))
	}
	skewed := mailroom.Claim{Node: "node_b", Now: t0.Add(time.Hour), Lease: time.Minute, Limit: 10}
	if got := Try(s.ClaimDueRecipients(ctx, skewed)).Must(t); len(got) != 0 {
		t.Fatal("a node whose clock is ahead took a recipient inside another's lease")
	}
	var second []*mailroom.QueuedRecipient
	poll.Until(t, 10*time.Second, "the lease ends", func() bool {
		Try(s.ReleaseLostClaims(ctx, time.Hour)).Must(t)
		second = Try(s.ClaimDueRecipients(ctx, skewed)).Must(t)
		return len(second) == 1
	})
	if second[0].ClaimToken == first[0].ClaimToken {
		t.Fatal("a new claim reused the old token")
	}
	// The due time was not touched by either claim.
	if !second[0].QueuedAt.Equal(t0) {
		t.Fatalf("queued at %v", second[0].QueuedAt)
	}
}

// Claims skip the recipient domains they are told are busy, and take the
// message's other recipients.
func testClaimSkipsDomains(t *testing.T, s mailroom.Store) {
	ctx := context.Background()
	acct := NewAccount(t, s, "acme")
	m := NewMessage(acct, t0, "a@slow.example", `"x@y"@fast.example`, "b@SLOW.example")
	Try(s.AcceptMessage(ctx, m)).Must(t)
	got := Try(s.ClaimDueRecipients(ctx, mailroom.Claim{Node: "node_a", Now: t0, Lease: time.Minute, Limit: 10,
		SkipDomains: []string{"slow.example"}})).Must(t)
	if len(got) != 1 || got[0].Address != `"x@y"@fast.example` {
		t.Fatalf("claimed %v, want only the fast domain's recipient", addresses(got))
	}
	rest := Try(claim(s, "node_a", t0, 10)).Must(t)
	if len(rest) != 2 {
		t.Fatalf("then claimed %v, want the two at slow.example", addresses(rest))
	}
}

// Released recipients are claimable again, at once or from the given time.
func testReleaseClaims(t *testing.T, s mailroom.Store) {
	ctx := context.Background()
	acct := NewAccount(t, s, "acme")
	Try(s.AcceptMessage(ctx, NewMessage(acct, t0, "a@x.example", "b@y.example"))).Must(t)
	held := Try(claim(s, "node_a", t0, 10)).Must(t)
	if err := s.ReleaseClaims(ctx, held[0].ClaimToken, held[:1], nil); err != nil {
		t.Fatal(err)
	}
	later := t0.Add(time.Minute)
	if err := s.ReleaseClaims(ctx, held[0].ClaimToken, held[1:], &later); err != nil {
		t.Fatal(err)
	}
	if got := Try(claim(s, "node_b", t0, 10)).Must(t); len(got) != 1 || got[0].Address != "a@x.example" {
		t.Fatalf("claimable at once: %v", addresses(got))
	}
	if got := Try(claim(s, "node_b", later, 10)).Must(t); len(got) != 1 || got[0].Address != "b@y.example" {
		t.Fatalf("claimable a minute later: %v", addresses(got))
	}
	// A stale token releases nothing.
	if err := s.ReleaseClaims(ctx, held[0].ClaimToken, held, nil); err != nil {
		t.Fatal(err)
	}
	if got := Try(claim(s, "node_c", later, 10)).Must(t); len(got) != 0 {
		t.Fatalf("a stale token released %v", addresses(got))
	}
}

func addresses(qs []*mailroom.QueuedRecipient) []string {
	out := make([]string, len(qs))
	for i, q := range qs {
		out[i] = q.Address
	}
	return out
}
