package storetest

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/mailroom/mailroom"
)

func init() {
	extraSuites = append(extraSuites,
		suite{"AcceptIdempotency", testAcceptIdempotency},
		suite{"AcceptConcurrentSameKey", testAcceptConcurrentSameKey},
		suite{"DeliveryQueue", testDeliveryQueue},
		suite{"MessageLog", testMessageLog},
		suite{"Suppressions", testSuppressions},
		suite{"Retention", testRetention},
		suite{"SupersededClaim", testSupersededClaim},
	)
}

// NewMessage returns an unsaved message of acct to the given addresses.
func NewMessage(acct *mailroom.Account, at time.Time, to ...string) *mailroom.Message {
	m := &mailroom.Message{
		ID: mailroom.NewID(mailroom.PrefixMessage, at), AccountID: acct.ID,
		From:    mailroom.Address{Name: "Shop", Address: "orders@shop.example"},
		Subject: "Your receipt", Category: mailroom.CategoryTransactional,
		Text: "Thanks", Domain: "shop.example", CreatedAt: at,
		Tags:          map[string]string{"kind": "receipt"},
		RequestDigest: []byte("digest-1"),
	}
	m.MessageIDHeader = m.ID + "@shop.example"
	for _, a := range to {
		m.To = append(m.To, mailroom.Address{Address: a})
		m.Recipients = append(m.Recipients, &mailroom.Recipient{Address: a, Kind: mailroom.KindTo})
	}
	return m
}

func testAcceptIdempotency(t *testing.T, s mailroom.Store) {
	ctx := context.Background()
	acct, other := NewAccount(t, s, "acme"), NewAccount(t, s, "globex")
	m := NewMessage(acct, t0, "a@x.example")
	m.IdempotencyKey = "order-1"
	res := Try(s.AcceptMessage(ctx, m)).Must(t)
	if res.Duplicate || res.MessageID != m.ID || res.Status != mailroom.MessageQueued {
		t.Fatalf("first accept: %+v", res)
	}
	again := NewMessage(acct, t0, "a@x.example")
	again.IdempotencyKey = "order-1"
	res = Try(s.AcceptMessage(ctx, again)).Must(t)
	if !res.Duplicate || res.MessageID != m.ID {
		t.Fatalf("same key, same request: %+v", res)
	}
	changed := NewMessage(acct, t0, "a@x.example")
	changed.IdempotencyKey, changed.RequestDigest = "order-1", []byte("digest-2")
	_, err := s.AcceptMessage(ctx, changed)
	wantCode(t, err, mailroom.ECodeIdempotencyKeyReused)
	// Keys are per account.
	theirs := NewMessage(other, t0, "a@x.example")
	theirs.IdempotencyKey = "order-1"
	if res := Try(s.AcceptMessage(ctx, theirs)).Must(t); res.Duplicate {
		t.Fatal("another account's key counted")
	}
	if page, _ := Try2(s.ListMessages(ctx, acct.ID, mailroom.MessageFilter{}, mailroom.Page{})).Must(t); len(page) != 1 {
		t.Fatalf("the account has %d messages, want 1", len(page))
	}
}

func testAcceptConcurrentSameKey(t *testing.T, s mailroom.Store) {
	ctx := context.Background()
	acct := NewAccount(t, s, "acme")
	var wg sync.WaitGroup
	ids := make(chan string, 50)
	var mu sync.Mutex
	dups := 0
	for range 50 {
		wg.Go(func() {
			m := NewMessage(acct, t0, "a@x.example")
			m.IdempotencyKey = "once"
			res, err := s.AcceptMessage(ctx, m)
			if err != nil {
				t.Error(err)
				return
			}
			ids <- res.MessageID
			if res.Duplicate {
				mu.Lock()
				dups++
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	close(ids)
	distinct := map[string]bool{}
	for id := range ids {
		distinct[id] = true
	}
	if len(distinct) != 1 || dups != 49 {
		t.Fatalf("50 concurrent sends with one key made %d messages (%d duplicates)", len(distinct), dups)
	}
}

func testDeliveryQueue(t *testing.T, s mailroom.Store) {
	ctx := context.Background()
	acct := NewAccount(t, s, "acme")
	for i := range 30 {
		if _, err := s.AcceptMessage(ctx, NewMessage(acct, t0, fmt.Sprintf("r%d@x.example", i))); err != nil {
			t.Fatal(err)
		}
	}
	// Four claimers at once: every recipient is claimed once.
	claimed := map[string]int{}
	for _, q := range claimConcurrently(t, 4, func() ([]*mailroom.QueuedRecipient, error) {
		return claim(s, "node_a", t0, 4)
	}) {
		claimed[q.Address]++
		if q.Message.Subject != "Your receipt" || q.Message.Tags["kind"] != "receipt" || !q.QueuedAt.Equal(t0) {
			t.Errorf("claimed recipient lacks its message: %+v %+v", q, q.Message)
		}
	}
	if len(claimed) != 30 {
		t.Fatalf("%d recipients claimed, want 30", len(claimed))
	}
	for a, n := range claimed {
		if n != 1 {
			t.Fatalf("%s claimed %d times", a, n)
		}
	}
	// Claimed recipients are held, whatever the node's clock says.
	if got := Try(claim(s, "node_b", t0.Add(time.Hour), 100)).Must(t); len(got) != 0 {
		t.Fatalf("%d recipients claimable while claimed", len(got))
	}
	// Once the node is gone, its work returns to anyone.
	if err := s.RemoveNode(ctx, "node_a"); err != nil {
		t.Fatal(err)
	}
	got := Try(claim(s, "node_b", t0, 100)).Must(t)
	if len(got) != 30 {
		t.Fatalf("after its node left, %d claimable, want 30", len(got))
	}

	// The first stored signed bytes win.
	q := got[0]
	first := Try(s.SaveRaw(ctx, q.MessageID, []byte("signed-A"))).Must(t)
	second := Try(s.SaveRaw(ctx, q.MessageID, []byte("signed-B"))).Must(t)
	if string(first) != "signed-A" || string(second) != "signed-A" {
		t.Fatalf("raw: %q then %q", first, second)
	}
	if _, raw, err := s.MessageForDelivery(ctx, q.MessageID); err != nil || string(raw) != "signed-A" {
		t.Fatalf("message for delivery: %q %v", raw, err)
	}

	// A hard bounce: state, event and suppression land together.
	now := t0.Add(2 * time.Minute)
	var err error
	r := q.Recipient
	r.Status, r.Attempts, r.LastAttemptAt = mailroom.RecipientBounced, 1, &now
	r.SMTPCode, r.SMTPResponse, r.MX = 550, "5.1.1 no such user", "mx.x.example"
	err = s.RecordAttempts(ctx, []*mailroom.Attempt{{
		Recipient: &r, Message: q.Message, ClaimToken: q.ClaimToken,
		Event:    mailroom.NewEmailEvent(q.Message, &r, mailroom.EventEmailBounced, now),
		Suppress: &mailroom.Suppression{AccountID: acct.ID, Address: r.Address, Reason: mailroom.SuppressedHardBounce, MessageID: r.MessageID, CreatedAt: now},
	}})
	if err != nil {
		t.Fatal(err)
	}
	m, events, err := s.Message(ctx, acct.ID, q.MessageID)
	if err != nil {
		t.Fatal(err)
	}
	if m.Status != mailroom.MessageBounced || m.Recipients[0].SMTPCode != 550 || m.Recipients[0].MX != "mx.x.example" {
		t.Fatalf("after the bounce: %+v %+v", m.Status, m.Recipients[0])
	}
	if len(events) != 2 || events[0].Type != mailroom.EventEmailQueued || events[1].Type != mailroom.EventEmailBounced {
		t.Fatalf("timeline: %v", eventTypes(events))
	}
	if sup := Try(s.Suppression(ctx, acct.ID, r.Address)).Must(t); sup.Reason != mailroom.SuppressedHardBounce {
		t.Fatalf("suppression: %+v", sup)
	}
	// A finished recipient is never claimed again.
	if _, err := s.ReleaseAllClaims(ctx); err != nil {
		t.Fatal(err)
	}
	for _, q2 := range Try(claim(s, "node_c", t0.Add(time.Hour), 100)).Must(t) {
		if q2.Address == r.Address {
			t.Fatal("a bounced recipient was claimed")
		}
	}
	// A later send to the suppressed address is accepted, not queued.
	res := Try(s.AcceptMessage(ctx, NewMessage(acct, now, r.Address))).Must(t)
	if res.Status != mailroom.MessageSuppressed {
		t.Fatalf("send to a suppressed address: %+v", res)
	}
}

func eventTypes(events []*mailroom.Event) []string {
	var out []string
	for _, e := range events {
		out = append(out, e.Type)
	}
	return out
}

func testMessageLog(t *testing.T, s mailroom.Store) {
	ctx := context.Background()
	acct, other := NewAccount(t, s, "acme"), NewAccount(t, s, "globex")
	for i := range 5 {
		m := NewMessage(acct, t0.Add(time.Duration(i)*time.Minute), fmt.Sprintf("r%d@x.example", i%2))
		if i == 3 {
			m.Tags = map[string]string{"kind": "alert"}
			m.Category = mailroom.CategoryMarketing
			m.From.Address = "News@Shop.example"
		}
		if i == 4 {
			m.Tags = map[string]string{"kind": "receipt", "order": "42"}
		}
		if _, err := s.AcceptMessage(ctx, m); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := s.AcceptMessage(ctx, NewMessage(other, t0, "r0@x.example")); err != nil {
		t.Fatal(err)
	}
	count := func(f mailroom.MessageFilter) int {
		t.Helper()
		page, _ := Try2(s.ListMessages(ctx, acct.ID, f, mailroom.Page{Limit: 100})).Must(t)
		return len(page)
	}
	since, until := t0.Add(time.Minute), t0.Add(3*time.Minute)
	for name, c := range map[string]struct {
		f    mailroom.MessageFilter
		want int
	}{
		"all":                  {mailroom.MessageFilter{}, 5},
		"to":                   {mailroom.MessageFilter{To: "r0@x.example"}, 3},
		"to, case":             {mailroom.MessageFilter{To: "R0@X.example"}, 3},
		"from":                 {mailroom.MessageFilter{From: "News@Shop.example"}, 1},
		"from, case":           {mailroom.MessageFilter{From: "news@SHOP.EXAMPLE"}, 1},
		"tag":                  {mailroom.MessageFilter{Tags: []mailroom.TagFilter{{Key: "kind", Value: "receipt"}}}, 4},
		"tags, all must match": {mailroom.MessageFilter{Tags: []mailroom.TagFilter{{Key: "kind", Value: "receipt"}, {Key: "order", Value: "42"}}}, 1},
		"tags, one key twice":  {mailroom.MessageFilter{Tags: []mailroom.TagFilter{{Key: "kind", Value: "receipt"}, {Key: "kind", Value: "alert"}}}, 0},
		"category":             {mailroom.MessageFilter{Category: mailroom.CategoryMarketing}, 1},
		"status":               {mailroom.MessageFilter{Status: mailroom.MessageQueued}, 5},
		"none":                 {mailroom.MessageFilter{Status: mailroom.MessageDelivered}, 0},
		"window":               {mailroom.MessageFilter{Since: &since, Until: &until}, 2},
	} {
		if got := count(c.f); got != c.want {
			t.Errorf("%s: %d messages, want %d", name, got, c.want)
		}
	}
	page, next := Try2(s.ListMessages(ctx, acct.ID, mailroom.MessageFilter{}, mailroom.Page{Limit: 3})).Must(t)
	if len(page) != 3 || next == "" || !page[0].CreatedAt.After(page[2].CreatedAt) || len(page[0].Recipients) != 1 {
		t.Fatalf("first page: %d items, next %q", len(page), next)
	}
	page, next = Try2(s.ListMessages(ctx, acct.ID, mailroom.MessageFilter{}, mailroom.Page{Limit: 3, Cursor: next})).Must(t)
	if len(page) != 2 || next != "" {
		t.Fatalf("second page: %d items, next %q", len(page), next)
	}
	_, _, err := s.Message(ctx, other.ID, page[0].ID)
	wantCode(t, err, mailroom.ECodeNotFound)
}

func testSuppressions(t *testing.T, s mailroom.Store) {
	ctx := context.Background()
	acct := NewAccount(t, s, "acme")
	first := Try(s.AddSuppression(ctx, &mailroom.Suppression{AccountID: acct.ID, Address: "a@x.example", Reason: mailroom.SuppressedManual, CreatedAt: t0})).Must(t)
	again := Try(s.AddSuppression(ctx, &mailroom.Suppression{AccountID: acct.ID, Address: "a@x.example", Reason: mailroom.SuppressedHardBounce, CreatedAt: t0.Add(time.Hour)})).Must(t)
	if again.Reason != first.Reason || !again.CreatedAt.Equal(t0) {
		t.Fatalf("re-adding changed the entry: %+v", again)
	}
	if list, _ := Try2(s.ListSuppressions(ctx, acct.ID, mailroom.Page{})).Must(t); len(list) != 1 {
		t.Fatalf("list: %d", len(list))
	}
	if err := s.DeleteSuppression(ctx, acct.ID, "a@x.example"); err != nil {
		t.Fatal(err)
	}
	wantCode(t, s.DeleteSuppression(ctx, acct.ID, "a@x.example"), mailroom.ECodeNotFound)
}

func testRetention(t *testing.T, s mailroom.Store) {
	ctx := context.Background()
	acct := NewAccount(t, s, "acme")
	old, pending := NewMessage(acct, t0, "a@x.example"), NewMessage(acct, t0, "b@x.example")
	for _, m := range []*mailroom.Message{old, pending} {
		if _, err := s.AcceptMessage(ctx, m); err != nil {
			t.Fatal(err)
		}
	}
	q := Try(claim(s, "node_a", t0, 10)).Must(t)
	for _, c := range q {
		if c.MessageID != old.ID {
			continue
		}
		r := c.Recipient
		r.Status = mailroom.RecipientDelivered
		if err := s.RecordAttempts(ctx, []*mailroom.Attempt{{Recipient: &r, Message: c.Message, ClaimToken: c.ClaimToken,
			Event: mailroom.NewEmailEvent(c.Message, &r, mailroom.EventEmailDelivered, t0)}}); err != nil {
			t.Fatal(err)
		}
	}
	n := Try(s.DeleteExpiredMessages(ctx, t0.Add(time.Hour), 100)).Must(t)
	if n != 1 {
		t.Fatalf("deleted %d, want only the finished message", n)
	}
	_, _, err := s.Message(ctx, acct.ID, old.ID)
	wantCode(t, err, mailroom.ECodeNotFound)
	if _, _, err := s.Message(ctx, acct.ID, pending.ID); err != nil {
		t.Fatalf("an unfinished message was removed: %v", err)
	}
}

// A worker whose claim was released (its node was taken for dead) records
// nothing over the outcome of the worker that claimed the recipient after it.
func testSupersededClaim(t *testing.T, s mailroom.Store) {
	ctx := context.Background()
	acct := NewAccount(t, s, "acme")
	if _, err := s.AcceptMessage(ctx, NewMessage(acct, t0, "a@x.example")); err != nil {
		t.Fatal(err)
	}
	record := func(q *mailroom.QueuedRecipient, st mailroom.RecipientStatus, typ string, due *time.Time) {
		t.Helper()
		r := q.Recipient
		r.Status, r.Attempts = st, r.Attempts+1
		if err := s.RecordAttempts(ctx, []*mailroom.Attempt{{Recipient: &r, Message: q.Message, ClaimToken: q.ClaimToken,
			DueAt: due, Event: mailroom.NewEmailEvent(q.Message, &r, typ, t0)}}); err != nil {
			t.Fatal(err)
		}
	}
	slow := Try(claim(s, "node_slow", t0, 10)).Must(t)[0]
	if err := s.RemoveNode(ctx, "node_slow"); err != nil {
		t.Fatal(err)
	}
	fast := Try(claim(s, "node_fast", t0, 10)).Must(t)[0]
	record(fast, mailroom.RecipientDelivered, mailroom.EventEmailDelivered, nil)
	later := t0.Add(time.Hour)
	record(slow, mailroom.RecipientDeferred, mailroom.EventEmailDeferred, &later)

	m, events, err := s.Message(ctx, acct.ID, slow.MessageID)
	if err != nil {
		t.Fatal(err)
	}
	if m.Status != mailroom.MessageDelivered || m.Recipients[0].Status != mailroom.RecipientDelivered {
		t.Fatalf("the superseded claim overwrote the outcome: %s / %s", m.Status, m.Recipients[0].Status)
	}
	if got := eventTypes(events); len(got) != 2 || got[1] != mailroom.EventEmailDelivered {
		t.Fatalf("timeline %v", got)
	}
	if again := Try(claim(s, "node_fast", t0.Add(2*time.Hour), 10)).Must(t); len(again) != 0 {
		t.Fatal("a delivered recipient became claimable again")
	}
}

// claim claims up to limit messages due at now for node.
func claim(s mailroom.Store, node string, now time.Time, limit int) ([]*mailroom.QueuedRecipient, error) {
	return s.ClaimDueRecipients(context.Background(), mailroom.Claim{Node: node, Now: now, Lease: time.Minute, Limit: limit})
}

// Engagement reads a message of acct and returns its first recipient and
// the engagement events (email.opened, email.clicked) on its timeline, as
// the log shows them: what a test of tracking checks after an open or a
// click.
func Engagement(t testing.TB, s mailroom.Store, accountID, messageID string) (*mailroom.Recipient, []*mailroom.Event) {
	t.Helper()
	m, events, err := s.Message(context.Background(), accountID, messageID)
	if err != nil {
		t.Fatal(err)
	}
	var out []*mailroom.Event
	for _, e := range events {
		if e.Type == mailroom.EventEmailOpened || e.Type == mailroom.EventEmailClicked {
			out = append(out, e)
		}
	}
	return m.Recipients[0], out
}
