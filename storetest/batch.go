package storetest

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/mailroom/mailroom"
)

func init() {
	extraSuites = append(extraSuites,
		suite{"AcceptMessagesBatch", testAcceptMessagesBatch},
		suite{"AcceptMessagesKeysWithinBatch", testAcceptMessagesKeysWithinBatch},
		suite{"AcceptMessagesRetried", testAcceptMessagesRetried},
		suite{"AcceptMessagesConcurrentKeys", testAcceptMessagesConcurrentKeys},
		suite{"AcceptMessagesSuppressed", testAcceptMessagesSuppressed},
		suite{"AcceptMessagesChunks", testAcceptMessagesChunks},
	)
}

// batchMessage returns the i-th message of a test batch: three recipients
// (to, cc, bcc), three tags, an idempotency key on every third, and every
// tenth scheduled an hour after its creation.
func batchMessage(acct *mailroom.Account, i int) *mailroom.Message {
	at := t0.Add(time.Duration(i) * time.Second)
	m := NewMessage(acct, at, fmt.Sprintf("to-%d@x.example", i))
	m.Subject = fmt.Sprintf("Receipt %d", i)
	m.Text = fmt.Sprintf("Thanks for order %d", i)
	m.Cc = []mailroom.Address{{Name: "Carbon", Address: fmt.Sprintf("cc-%d@y.example", i)}}
	m.Bcc = []mailroom.Address{{Address: fmt.Sprintf("bcc-%d@z.example", i)}}
	m.Recipients = append(m.Recipients,
		&mailroom.Recipient{Address: m.Cc[0].Address, Kind: mailroom.KindCc},
		&mailroom.Recipient{Address: m.Bcc[0].Address, Kind: mailroom.KindBcc})
	m.Tags = map[string]string{"kind": "receipt", "n": strconv.Itoa(i), "parity": strconv.Itoa(i % 2)}
	m.RequestDigest = fmt.Appendf(nil, "digest-%d", i)
	if i%3 == 0 {
		m.IdempotencyKey = fmt.Sprintf("order-%d", i)
	}
	if i%10 == 0 {
		scheduleMessage(m, at.Add(time.Hour))
	}
	return m
}

// scheduleMessage makes m a send scheduled at at, as Validate does.
func scheduleMessage(m *mailroom.Message, at time.Time) {
	m.ScheduledAt = &at
	m.Status = mailroom.MessageScheduled
	for _, r := range m.Recipients {
		r.Status = mailroom.RecipientScheduled
	}
}

// acceptAll accepts ms in one AcceptMessages call and checks that it
// answers each message, in order.
func acceptAll(t *testing.T, s mailroom.Store, ms []*mailroom.Message) []mailroom.AcceptOutcome {
	t.Helper()
	out := Try(s.AcceptMessages(context.Background(), ms)).Must(t)
	if len(out) != len(ms) {
		t.Fatalf("%d outcomes for %d messages", len(out), len(ms))
	}
	return out
}

// messageOf reads an account's message with its events.
func messageOf(t *testing.T, s mailroom.Store, accountID, id string) (*mailroom.Message, []*mailroom.Event) {
	t.Helper()
	m, events, err := s.Message(context.Background(), accountID, id)
	if err != nil {
		t.Fatalf("message %s: %v", id, err)
	}
	return m, events
}

// allMessages pages through an account's email log.
func allMessages(t *testing.T, s mailroom.Store, accountID string, f mailroom.MessageFilter) []*mailroom.Message {
	t.Helper()
	var all []*mailroom.Message
	cursor := ""
	for {
		page, next := Try2(s.ListMessages(context.Background(), accountID, f, mailroom.Page{Limit: 100, Cursor: cursor})).Must(t)
		all = append(all, page...)
		if next == "" {
			return all
		}
		cursor = next
	}
}

// allEvents pages through an account's events.
func allEvents(t *testing.T, s mailroom.Store, accountID string) []*mailroom.Event {
	t.Helper()
	var all []*mailroom.Event
	cursor := ""
	for {
		page, next := Try2(s.ListEvents(context.Background(), accountID, mailroom.EventFilter{}, mailroom.Page{Limit: 100, Cursor: cursor})).Must(t)
		all = append(all, page...)
		if next == "" {
			return all
		}
		cursor = next
	}
}

// storedAs checks that the stored message id (with its events) is m as
// accepted: its log entry, content, recipients and one first event each.
func storedAs(t *testing.T, s mailroom.Store, id string, m *mailroom.Message) {
	t.Helper()
	ctx := context.Background()
	got, events := messageOf(t, s, m.AccountID, id)
	wantStatus := mailroom.MessageQueued
	first, firstState := mailroom.EventEmailQueued, mailroom.RecipientQueued
	if m.ScheduledAt != nil {
		wantStatus, first, firstState = mailroom.MessageScheduled, mailroom.EventEmailScheduled, mailroom.RecipientScheduled
	}
	if got.Status != wantStatus || got.Subject != m.Subject || got.Category != m.Category || got.Domain != m.Domain ||
		got.IdempotencyKey != m.IdempotencyKey || !got.CreatedAt.Equal(m.CreatedAt) || !sameTime(got.ScheduledAt, m.ScheduledAt) {
		t.Fatalf("message %s stored as %s %q %s %s key %q created %v scheduled %v", id, got.Status, got.Subject,
			got.Category, got.Domain, got.IdempotencyKey, got.CreatedAt, got.ScheduledAt)
	}
	if fmt.Sprint(got.From, got.To, got.Cc, got.Bcc, sortedTags(got.Tags)) != fmt.Sprint(m.From, m.To, m.Cc, m.Bcc, sortedTags(m.Tags)) {
		t.Fatalf("message %s envelope %v %v %v %v %v, want %v %v %v %v %v", id, got.From, got.To, got.Cc, got.Bcc, got.Tags,
			m.From, m.To, m.Cc, m.Bcc, m.Tags)
	}
	if len(got.Recipients) != len(m.Recipients) {
		t.Fatalf("message %s has %d recipients, want %d", id, len(got.Recipients), len(m.Recipients))
	}
	for j, r := range got.Recipients {
		want := m.Recipients[j]
		state, next := firstState, m.ScheduledAt
		if want.Status == mailroom.RecipientSuppressed {
			state, next = mailroom.RecipientSuppressed, nil
		}
		if r.MessageID != id || r.Address != want.Address || r.Kind != want.Kind || r.Status != state ||
			!sameTime(r.NextAttemptAt, next) || r.Attempts != 0 || r.LastAttemptAt != nil {
			t.Fatalf("message %s recipient %d: %+v, want %s %s %s next %v", id, j, r, want.Address, want.Kind, state, next)
		}
	}
	// One first event a recipient, for that recipient, at the accept.
	if len(events) != len(m.Recipients) {
		t.Fatalf("message %s has events %v, want one per recipient", id, eventTypes(events))
	}
	seen := map[string]bool{}
	for _, e := range events {
		var data mailroom.EmailEventData
		if err := json.Unmarshal(e.Data, &data); err != nil {
			t.Fatal(err)
		}
		i := slices.IndexFunc(m.Recipients, func(r *mailroom.Recipient) bool { return r.Address == e.Recipient })
		if i < 0 || seen[e.Recipient] {
			t.Fatalf("message %s: event for %q, which is no recipient or has two", id, e.Recipient)
		}
		seen[e.Recipient] = true
		typ := first
		if m.Recipients[i].Status == mailroom.RecipientSuppressed {
			typ = mailroom.EventEmailSuppressed
		}
		if e.Type != typ || e.MessageID != id || e.AccountID != m.AccountID || !e.CreatedAt.Equal(m.CreatedAt) ||
			data.MessageID != id || data.Recipient != e.Recipient || data.From != m.From.Address || data.Subject != m.Subject ||
			fmt.Sprint(sortedTags(data.Tags)) != fmt.Sprint(sortedTags(m.Tags)) {
			t.Fatalf("message %s event %s %s at %v: %s", id, e.Type, e.Recipient, e.CreatedAt, e.Data)
		}
	}
	// The content delivery reads.
	full, _, err := s.MessageForDelivery(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if full.Text != m.Text || full.MessageIDHeader != m.MessageIDHeader || full.Subject != m.Subject ||
		fmt.Sprint(full.To, full.Cc, full.Bcc) != fmt.Sprint(m.To, m.Cc, m.Bcc) {
		t.Fatalf("message %s content: %q %q %v %v %v", id, full.Text, full.MessageIDHeader, full.To, full.Cc, full.Bcc)
	}
}

func sameTime(a, b *time.Time) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	return a.Equal(*b)
}

func sortedTags(tags map[string]string) []string {
	var out []string
	for k, v := range tags {
		out = append(out, k+"="+v)
	}
	slices.Sort(out)
	return out
}

// normalised is what of a stored message must not depend on whether it
// came alone or in a batch: everything but its ids.
func normalised(t *testing.T, s mailroom.Store, accountID, id string) string {
	t.Helper()
	m, events := messageOf(t, s, accountID, id)
	recipients, scheduled := m.Recipients, m.ScheduledAt
	m.ID, m.AccountID, m.Recipients, m.ScheduledAt = "", "", nil, nil
	out := fmt.Sprintf("%+v|%v|%v|", *m, scheduled, sortedTags(m.Tags))
	for _, r := range recipients {
		r.MessageID = ""
		next, last := r.NextAttemptAt, r.LastAttemptAt
		r.NextAttemptAt, r.LastAttemptAt = nil, nil
		out += fmt.Sprintf("%+v %v %v|", *r, next, last)
	}
	var evs []string
	for _, e := range events {
		var data mailroom.EmailEventData
		if err := json.Unmarshal(e.Data, &data); err != nil {
			t.Fatal(err)
		}
		data.MessageID = ""
		evs = append(evs, fmt.Sprintf("%s %s %v %+v %v", e.Type, e.Recipient, e.CreatedAt.UTC(), data, sortedTags(data.Tags)))
	}
	slices.Sort(evs)
	return out + fmt.Sprint(evs)
}

// A batch of 300 is stored as 300 single accepts would store it, each
// message with its recipients, tags and first events, answered in order.
func testAcceptMessagesBatch(t *testing.T, s mailroom.Store) {
	ctx := context.Background()
	acct, single := NewAccount(t, s, "acme"), NewAccount(t, s, "single")
	const n = 300
	ms := make([]*mailroom.Message, n)
	for i := range ms {
		ms[i] = batchMessage(acct, i)
	}
	out := acceptAll(t, s, ms)
	scheduled := 0
	for i, o := range out {
		want := mailroom.MessageQueued
		if ms[i].ScheduledAt != nil {
			want = mailroom.MessageScheduled
			scheduled++
		}
		if o.Err != nil || o.Result.Duplicate || o.Result.MessageID != ms[i].ID || o.Result.Status != want {
			t.Fatalf("outcome %d: %+v, want %s %s", i, o, ms[i].ID, want)
		}
	}

	// The same messages accepted one by one, by another account: stored
	// alike but for their ids.
	for _, i := range []int{0, 1, 2, 3, 10, 127, 128, 129, 200, 255, 256, 299} {
		storedAs(t, s, ms[i].ID, ms[i])
		twin := batchMessage(single, i)
		res := Try(s.AcceptMessage(ctx, twin)).Must(t)
		if res.MessageID != twin.ID {
			t.Fatalf("single accept of %d: %+v", i, res)
		}
		if a, b := normalised(t, s, acct.ID, ms[i].ID), normalised(t, s, single.ID, twin.ID); a != b {
			t.Fatalf("message %d in a batch:\n%s\nalone:\n%s", i, a, b)
		}
	}

	// Counts: every message once, with its three recipients; tags and
	// addresses searchable.
	all := allMessages(t, s, acct.ID, mailroom.MessageFilter{})
	ids := map[string]bool{}
	recipients := 0
	for _, m := range all {
		ids[m.ID] = true
		recipients += len(m.Recipients)
	}
	if len(all) != n || len(ids) != n || recipients != 3*n {
		t.Fatalf("the log holds %d messages (%d distinct), %d recipients; want %d, %d", len(all), len(ids), recipients, n, 3*n)
	}
	for _, m := range ms {
		if !ids[m.ID] {
			t.Fatalf("message %s missing from the log", m.ID)
		}
	}
	count := func(f mailroom.MessageFilter) int { t.Helper(); return len(allMessages(t, s, acct.ID, f)) }
	for name, c := range map[string]struct {
		f    mailroom.MessageFilter
		want int
	}{
		"scheduled": {mailroom.MessageFilter{Status: mailroom.MessageScheduled}, scheduled},
		"queued":    {mailroom.MessageFilter{Status: mailroom.MessageQueued}, n - scheduled},
		"odd":       {mailroom.MessageFilter{Tags: []mailroom.TagFilter{{Key: "parity", Value: "1"}}}, n / 2},
		"one tag":   {mailroom.MessageFilter{Tags: []mailroom.TagFilter{{Key: "n", Value: "257"}, {Key: "kind", Value: "receipt"}}}, 1},
		"cc":        {mailroom.MessageFilter{To: "CC-129@y.example"}, 1},
		"bcc":       {mailroom.MessageFilter{To: "bcc-298@z.example"}, 1},
	} {
		if got := count(c.f); got != c.want {
			t.Errorf("%s: %d messages, want %d", name, got, c.want)
		}
	}
	if events := allEvents(t, s, acct.ID); len(events) != 3*n {
		t.Fatalf("%d events, want one per recipient: %d", len(events), 3*n)
	}
	// Every key is taken: a single send under one is its duplicate.
	again := batchMessage(acct, 123)
	if res := Try(s.AcceptMessage(ctx, again)).Must(t); !res.Duplicate || res.MessageID != ms[123].ID {
		t.Fatalf("a single send under a batch's key: %+v", res)
	}
	// The queue holds the unscheduled recipients, each once.
	claimed := map[string]int{}
	for _, q := range claimConcurrently(t, 2, func() ([]*mailroom.QueuedRecipient, error) {
		return claim(s, "node_a", t0.Add(10*time.Minute), 50)
	}) {
		if q.Message.AccountID == acct.ID {
			claimed[q.MessageID+" "+q.Address]++
		}
	}
	if len(claimed) != 3*(n-scheduled) {
		t.Fatalf("%d recipients claimable, want %d", len(claimed), 3*(n-scheduled))
	}
	for k, c := range claimed {
		if c != 1 {
			t.Fatalf("%s claimed %d times", k, c)
		}
	}
}

// Within one call, a message whose key an earlier one used is that one's
// duplicate, or, for another request, a reused key; either way the rest
// of the batch is stored.
func testAcceptMessagesKeysWithinBatch(t *testing.T, s mailroom.Store) {
	ctx := context.Background()
	acct, other := NewAccount(t, s, "acme"), NewAccount(t, s, "globex")
	const n = 200
	ms := make([]*mailroom.Message, n)
	for i := range ms {
		ms[i] = NewMessage(acct, t0.Add(time.Duration(i)*time.Millisecond), fmt.Sprintf("r%d@x.example", i))
		ms[i].RequestDigest = fmt.Appendf(nil, "digest-%d", i)
	}
	key := func(i int, k string, digest string) {
		ms[i].IdempotencyKey, ms[i].RequestDigest = k, []byte(digest)
	}
	// Pairs in one chunk of rows, and across chunks (128 + 64 + 8).
	key(0, "a", "d-a")
	key(1, "a", "d-a")   // duplicate of 0
	key(2, "b", "d-b")   //
	key(3, "b", "other") // reused
	key(100, "c", "d-c")
	key(150, "c", "d-c") // duplicate of 100, in the next chunk
	key(151, "c", "xxx") // reused
	key(190, "d", "d-d")
	key(199, "d", "d-d") // duplicate of 190
	// Keys are per account: another's under key a is its own message.
	theirs := NewMessage(other, t0, "r@x.example")
	theirs.IdempotencyKey, theirs.RequestDigest = "a", []byte("another")
	ms = append(ms, theirs)
	out := acceptAll(t, s, ms)
	if o := out[n]; o.Err != nil || o.Result.Duplicate || o.Result.MessageID != theirs.ID {
		t.Fatalf("another account's message under key a: %+v", o)
	}
	ms, out = ms[:n], out[:n]
	dupOf := map[int]int{1: 0, 150: 100, 199: 190}
	reused := map[int]bool{3: true, 151: true}
	isDup := func(i int) bool { _, ok := dupOf[i]; return ok }
	for i, o := range out {
		switch {
		case reused[i]:
			if mailroom.ErrorCode(o.Err) != mailroom.ECodeIdempotencyKeyReused {
				t.Fatalf("outcome %d: %+v, want %s", i, o, mailroom.ECodeIdempotencyKeyReused)
			}
		case isDup(i):
			first := ms[dupOf[i]].ID
			if o.Err != nil || !o.Result.Duplicate || o.Result.MessageID != first || o.Result.Status != mailroom.MessageQueued {
				t.Fatalf("outcome %d: %+v, want a duplicate of %s", i, o, first)
			}
		default:
			if o.Err != nil || o.Result.Duplicate || o.Result.MessageID != ms[i].ID {
				t.Fatalf("outcome %d: %+v, want %s stored", i, o, ms[i].ID)
			}
		}
	}
	all := allMessages(t, s, acct.ID, mailroom.MessageFilter{})
	if len(all) != n-len(dupOf)-len(reused) {
		t.Fatalf("%d messages stored, want %d", len(all), n-len(dupOf)-len(reused))
	}
	for i := range ms {
		_, events, err := s.Message(ctx, acct.ID, ms[i].ID)
		if isDup(i) || reused[i] {
			wantCode(t, err, mailroom.ECodeNotFound)
			continue
		}
		if err != nil || len(events) != 1 {
			t.Fatalf("message %d: %v, events %v", i, err, eventTypes(events))
		}
	}
	if events := allEvents(t, s, acct.ID); len(events) != len(all) {
		t.Fatalf("%d events for %d messages of one recipient", len(events), len(all))
	}
	// The stored key keeps the first request's digest.
	res, err := s.IdempotentMessage(ctx, acct.ID, "b", []byte("d-b"))
	if err != nil || res.MessageID != ms[2].ID {
		t.Fatalf("key b: %+v %v", res, err)
	}
}

// A batch sent again (the client did not hear back) is answered from the
// first: every item a duplicate of its first message, nothing stored anew.
func testAcceptMessagesRetried(t *testing.T, s mailroom.Store) {
	ctx := context.Background()
	acct := NewAccount(t, s, "acme")
	const n = 150
	build := func() []*mailroom.Message {
		ms := make([]*mailroom.Message, n)
		for i := range ms {
			ms[i] = batchMessage(acct, i)
			ms[i].IdempotencyKey = fmt.Sprintf("retry-%d", i)
		}
		return ms
	}
	first := build()
	out := acceptAll(t, s, first)
	for i, o := range out {
		if o.Err != nil || o.Result.Duplicate || o.Result.MessageID != first[i].ID {
			t.Fatalf("first send, outcome %d: %+v", i, o)
		}
	}
	// The first's messages move on meanwhile: a duplicate tells the status now.
	// (At half past, before any of the scheduled ones is due.)
	held := Try(claim(s, "node_a", t0.Add(30*time.Minute), n)).Must(t)
	if len(held) == 0 {
		t.Fatal("nothing claimable")
	}
	for i, q := range held {
		if i%2 == 1 {
			continue
		}
		r := q.Recipient
		r.Status, r.Attempts = mailroom.RecipientFailed, 1
		if err := s.RecordAttempts(ctx, []*mailroom.Attempt{{Recipient: &r, Message: q.Message, ClaimToken: q.ClaimToken,
			Event: mailroom.NewEmailEvent(q.Message, &r, mailroom.EventEmailFailed, t0.Add(30*time.Minute))}}); err != nil {
			t.Fatal(err)
		}
	}
	status := map[string]mailroom.MessageStatus{}
	for _, m := range allMessages(t, s, acct.ID, mailroom.MessageFilter{}) {
		status[m.ID] = m.Status
	}
	eventsBefore := len(allEvents(t, s, acct.ID))

	retry := build()
	out = acceptAll(t, s, retry)
	for i, o := range out {
		if o.Err != nil || !o.Result.Duplicate || o.Result.MessageID != first[i].ID || o.Result.Status != status[first[i].ID] {
			t.Fatalf("retry, outcome %d: %+v, want a duplicate of %s (%s)", i, o, first[i].ID, status[first[i].ID])
		}
		if retry[i].ID == first[i].ID {
			t.Fatal("the retry reused the first ids")
		}
	}
	// A retry with one request changed: that item alone is refused.
	third := build()
	third[7].RequestDigest = []byte("changed")
	out = acceptAll(t, s, third)
	for i, o := range out {
		if i == 7 {
			if mailroom.ErrorCode(o.Err) != mailroom.ECodeIdempotencyKeyReused {
				t.Fatalf("changed item: %+v", o)
			}
			continue
		}
		if o.Err != nil || !o.Result.Duplicate || o.Result.MessageID != first[i].ID {
			t.Fatalf("third send, outcome %d: %+v", i, o)
		}
	}
	if all := allMessages(t, s, acct.ID, mailroom.MessageFilter{}); len(all) != n {
		t.Fatalf("%d messages after the retries, want %d", len(all), n)
	}
	if got := len(allEvents(t, s, acct.ID)); got != eventsBefore {
		t.Fatalf("the retries wrote %d events", got-eventsBefore)
	}
	for _, m := range append(retry, third...) {
		_, _, err := s.Message(ctx, acct.ID, m.ID)
		wantCode(t, err, mailroom.ECodeNotFound)
	}
	// Nothing new is due either.
	if got := Try(claim(s, "node_b", t0.Add(30*time.Minute), n)).Must(t); len(got) != 0 {
		t.Fatalf("the retries queued %d recipients", len(got))
	}
}

// Batches sent at once under the same keys, each in its own order, store
// each key's message once: every batch answers every key with that one
// message, and exactly one batch stored it.
func testAcceptMessagesConcurrentKeys(t *testing.T, s mailroom.Store) {
	acct := NewAccount(t, s, "acme")
	const batches, keys = 8, 60
	ids := make([]map[string]mailroom.AcceptResult, batches) // by key
	var wg sync.WaitGroup
	start := make(chan struct{})
	for b := range batches {
		wg.Go(func() {
			order := rand.Perm(keys)
			ms := make([]*mailroom.Message, keys)
			for i, k := range order {
				ms[i] = NewMessage(acct, t0.Add(time.Duration(k)*time.Millisecond), fmt.Sprintf("r%d@x.example", k))
				ms[i].IdempotencyKey, ms[i].RequestDigest = fmt.Sprintf("k%d", k), fmt.Appendf(nil, "d%d", k)
			}
			<-start
			out, err := s.AcceptMessages(context.Background(), ms)
			if err != nil {
				t.Errorf("batch %d: %v", b, err)
				return
			}
			ids[b] = map[string]mailroom.AcceptResult{}
			for i, o := range out {
				if o.Err != nil || (!o.Result.Duplicate && o.Result.MessageID != ms[i].ID) {
					t.Errorf("batch %d, %s: %+v", b, ms[i].IdempotencyKey, o)
				}
				ids[b][ms[i].IdempotencyKey] = o.Result
			}
		})
	}
	close(start)
	wg.Wait()
	if t.Failed() {
		t.FailNow()
	}
	for k := range keys {
		key := fmt.Sprintf("k%d", k)
		first, stored := "", 0
		for b := range batches {
			res := ids[b][key]
			if first == "" {
				first = res.MessageID
			}
			if res.MessageID != first {
				t.Fatalf("%s answered as %s and as %s", key, first, res.MessageID)
			}
			if !res.Duplicate {
				stored++
			}
		}
		if stored != 1 {
			t.Fatalf("%s stored by %d batches", key, stored)
		}
	}
	if all := allMessages(t, s, acct.ID, mailroom.MessageFilter{}); len(all) != keys {
		t.Fatalf("%d messages stored under %d keys", len(all), keys)
	}
}

// Suppressed addresses in a batch, whatever their case, are stored
// suppressed with their event, per account; the others are queued.
func testAcceptMessagesSuppressed(t *testing.T, s mailroom.Store) {
	ctx := context.Background()
	acct, other := NewAccount(t, s, "acme"), NewAccount(t, s, "globex")
	for _, a := range []string{"Blocked@X.example", "gone@y.example"} {
		Try(s.AddSuppression(ctx, &mailroom.Suppression{AccountID: acct.ID, Address: a, Reason: mailroom.SuppressedManual, CreatedAt: t0})).Must(t)
	}
	var ms []*mailroom.Message
	for i := range 40 {
		blocked := []string{"blocked@x.example", "BLOCKED@X.EXAMPLE", "Blocked@x.Example"}[i%3]
		ms = append(ms, NewMessage(acct, t0.Add(time.Duration(i)*time.Millisecond), fmt.Sprintf("ok-%d@x.example", i), blocked))
	}
	allGone := NewMessage(acct, t0, "GONE@y.example", "blocked@x.example")
	theirs := NewMessage(other, t0, "blocked@x.example") // suppressed for acme only
	sched := NewMessage(acct, t0, "later@x.example", "Gone@Y.example")
	scheduleMessage(sched, t0.Add(time.Hour))
	ms = append(ms, allGone, theirs, sched)
	out := acceptAll(t, s, ms)

	for i, m := range ms {
		want := mailroom.MessageQueued
		switch m {
		case allGone:
			want = mailroom.MessageSuppressed
		case sched:
			want = mailroom.MessageScheduled
		}
		if out[i].Err != nil || out[i].Result.Status != want {
			t.Fatalf("outcome %d: %+v, want %s", i, out[i], want)
		}
		got, events := messageOf(t, s, m.AccountID, m.ID)
		if got.Status != want {
			t.Fatalf("message %d is %s, want %s", i, got.Status, want)
		}
		for j, r := range got.Recipients {
			suppressed := m.AccountID == acct.ID && (mailroom.AddressKey(r.Address) == "blocked@x.example" ||
				mailroom.AddressKey(r.Address) == "gone@y.example")
			wantState, wantEvent := mailroom.RecipientQueued, mailroom.EventEmailQueued
			if m == sched {
				wantState, wantEvent = mailroom.RecipientScheduled, mailroom.EventEmailScheduled
			}
			if suppressed {
				wantState, wantEvent = mailroom.RecipientSuppressed, mailroom.EventEmailSuppressed
			}
			if r.Address != m.Recipients[j].Address || r.Status != wantState || (suppressed && r.NextAttemptAt != nil) {
				t.Fatalf("message %d, %s: %s next %v, want %s", i, r.Address, r.Status, r.NextAttemptAt, wantState)
			}
			n := 0
			for _, e := range events {
				if e.Recipient == r.Address {
					n++
					if e.Type != wantEvent {
						t.Fatalf("message %d, %s: event %s, want %s", i, r.Address, e.Type, wantEvent)
					}
				}
			}
			if n != 1 {
				t.Fatalf("message %d, %s: %d events", i, r.Address, n)
			}
		}
	}
	// Only the queued recipients are in the queue.
	for _, q := range claimConcurrently(t, 2, func() ([]*mailroom.QueuedRecipient, error) {
		return claim(s, "node_a", t0.Add(time.Minute), 20)
	}) {
		if q.Message.AccountID == acct.ID && mailroom.AddressKey(q.Address) == "blocked@x.example" || q.MessageID == allGone.ID {
			t.Fatalf("a suppressed recipient was claimed: %s of %s", q.Address, q.MessageID)
		}
	}
}

// Batches of the sizes around the multi-row statements' chunks (powers of
// two up to 128 rows) store each message exactly once, with all its rows.
func testAcceptMessagesChunks(t *testing.T, s mailroom.Store) {
	for _, n := range []int{1, 2, 3, 127, 128, 129, 255, 257} {
		acct := NewAccount(t, s, fmt.Sprintf("size-%d", n))
		ms := make([]*mailroom.Message, n)
		for i := range ms {
			ms[i] = NewMessage(acct, t0.Add(time.Duration(i)*time.Millisecond), fmt.Sprintf("a%d@x.example", i), fmt.Sprintf("b%d@y.example", i))
			ms[i].Tags = map[string]string{"size": strconv.Itoa(n), "parity": strconv.Itoa(i % 2)}
			if i%2 == 0 {
				ms[i].IdempotencyKey = fmt.Sprintf("k%d", i)
			}
		}
		checkBatchStored(t, s, acct, ms, acceptAll(t, s, ms), 2)
	}
	// 100 messages of 50 recipients: 5,000 recipient and event rows.
	acct := NewAccount(t, s, "wide")
	ms := make([]*mailroom.Message, 100)
	for i := range ms {
		var to []string
		for j := range 50 {
			to = append(to, fmt.Sprintf("r%d-%d@x%d.example", i, j, j%7))
		}
		ms[i] = NewMessage(acct, t0.Add(time.Duration(i)*time.Millisecond), to...)
		ms[i].Tags = map[string]string{"size": "100", "parity": strconv.Itoa(i % 2)}
	}
	checkBatchStored(t, s, acct, ms, acceptAll(t, s, ms), 50)
}

func checkBatchStored(t *testing.T, s mailroom.Store, acct *mailroom.Account, ms []*mailroom.Message, out []mailroom.AcceptOutcome, per int) {
	t.Helper()
	n := len(ms)
	byID := map[string]*mailroom.Message{}
	for i, o := range out {
		if o.Err != nil || o.Result.Duplicate || o.Result.MessageID != ms[i].ID {
			t.Fatalf("batch of %d, outcome %d: %+v", n, i, o)
		}
		byID[ms[i].ID] = ms[i]
	}
	all := allMessages(t, s, acct.ID, mailroom.MessageFilter{})
	seen := map[string]bool{}
	for _, m := range all {
		want := byID[m.ID]
		if want == nil || seen[m.ID] {
			t.Fatalf("batch of %d: message %s stored twice or not sent", n, m.ID)
		}
		seen[m.ID] = true
		if len(m.Recipients) != per {
			t.Fatalf("batch of %d: message %s has %d recipients, want %d", n, m.ID, len(m.Recipients), per)
		}
		for j, r := range m.Recipients {
			if r.Address != want.Recipients[j].Address || r.Status != mailroom.RecipientQueued {
				t.Fatalf("batch of %d: message %s recipient %d is %s %s, want %s", n, m.ID, j, r.Address, r.Status, want.Recipients[j].Address)
			}
		}
	}
	if len(seen) != n {
		t.Fatalf("batch of %d: %d messages stored", n, len(seen))
	}
	events := allEvents(t, s, acct.ID)
	perMessage := map[string]int{}
	for _, e := range events {
		perMessage[e.MessageID]++
	}
	if len(events) != n*per || len(perMessage) != n {
		t.Fatalf("batch of %d: %d events over %d messages, want %d over %d", n, len(events), len(perMessage), n*per, n)
	}
	// Both tags of every message are rows of their own (the tag filter
	// reads those, not the envelope).
	for parity, want := range map[string]int{"0": (n + 1) / 2, "1": n / 2} {
		f := mailroom.MessageFilter{Tags: []mailroom.TagFilter{{Key: "parity", Value: parity}, {Key: "size", Value: strconv.Itoa(n)}}}
		if got := len(allMessages(t, s, acct.ID, f)); got != want {
			t.Fatalf("batch of %d: %d messages tagged parity=%s, want %d", n, got, parity, want)
		}
	}
}
