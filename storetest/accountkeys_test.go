package storetest_test

import (
	"context"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mailroom/mailroom"
	"github.com/mailroom/mailroom/sqlstore"
	"github.com/mailroom/mailroom/storetest"
)

// TestAccountKeysMigration holds migration 00016 (integer account keys),
// which gives each account an integer key and rewrites every row of
// messages, recipients, message_tags and events to hold it instead of the
// account's 16 bytes. It stores, in the schema of version 15, the rows
// TestCompactKeysMigration stores in version 14's, and reads every field
// back the same (testMigratedRows); a row whose account is not in accounts
// must make the migration fail, leaving the database at version 15 as it
// was.
func TestAccountKeysMigration(t *testing.T) {
	storetest.Each(t, func(t *testing.T, e storetest.Engine) {
		t.Run("rows read back", func(t *testing.T) { testMigratedRows(t, e, 15) })
		t.Run("a row of no account", func(t *testing.T) { testAccountKeysRefusal(t, e) })
	})
}

func testAccountKeysRefusal(t *testing.T, e storetest.Engine) {
	ctx := context.Background()
	at := time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC)
	acct := mailroom.NewID(mailroom.PrefixAccount, at)
	ghost := mailroom.NewID(mailroom.PrefixAccount, at) // in no accounts row
	msg := mailroom.NewID(mailroom.PrefixMessage, at)
	old := newOldDatabase(t, e, 15)
	db := old.connect(t)
	mustExec(t, db, `INSERT INTO accounts (id, name, created_at) VALUES ($1, 'acme', 0)`, acct)
	mustExec(t, db, insertOldMessage, storedKey(t, msg), storedKey(t, ghost), "queued", "a@shop.example", "Hi", "transactional",
		"shop.example", nil, nil, `{"text":"Hi","messageIdHeader":"x@shop.example"}`, nil, at.UnixMicro(), nil,
		`{"from":{"address":"a@shop.example"},"to":[{"address":"b@x.example"}]}`, nil, nil)
	db.Close()

	s, err := old.open()
	if err == nil {
		s.Close()
		t.Fatal("the store opened on a message of no account; migration 00016 must refuse it")
	}
	if !strings.Contains(err.Error(), "account") {
		t.Errorf("opening failed with %q, which does not say the account is missing", err)
	}
	db = old.connect(t)
	if v, err := old.provider(t, db).GetDBVersion(ctx); err != nil || v != 15 {
		t.Errorf("after the failed migration the database is at version %d (%v), want 15", v, err)
	}
	checkRows(t, db, "messages", `SELECT id, account_id FROM messages`, [][]any{{storedKey(t, msg), storedKey(t, ghost)}})
}

// TestAccountKeysKeepAccountsApart: the stores find each account's mail
// by its integer key (migration 00016), from memory once read. Two
// accounts with the same idempotency key, address and tags each see only
// their own message, events and scheduled mail, through a store that
// created them and through others that did not (a node started later,
// whose memory starts empty); an account created through a second store
// gets a key of its own; an account id no account has finds nothing, and
// no mail is accepted for it. Reads of mail in whatever account (delivery,
// reports) give the account of each row on a store that knows none yet.
func TestAccountKeysKeepAccountsApart(t *testing.T) {
	storetest.Each(t, func(t *testing.T, e storetest.Engine) {
		ctx := context.Background()
		open := reopenable(t, e)
		s1 := open()
		a, b := storetest.NewAccount(t, s1, "acme"), storetest.NewAccount(t, s1, "globex")
		at := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
		send := func(s *sqlstore.Store, acct *mailroom.Account, at time.Time) *mailroom.Message {
			t.Helper()
			m := storetest.NewMessage(acct, at, "ann@x.example")
			m.IdempotencyKey = "order-1"
			if _, err := s.AcceptMessage(ctx, m); err != nil {
				t.Fatalf("accept for %s: %v", acct.Name, err)
			}
			return m
		}
		ma, mb := send(s1, a, at), send(s1, b, at.Add(time.Second))
		// A scheduled message of a's, without a key.
		later := storetest.NewMessage(a, at.Add(2*time.Second), "bob@x.example")
		when := at.Add(24 * time.Hour)
		later.ScheduledAt = &when
		storetest.Try(s1.AcceptMessage(ctx, later)).Must(t)

		// A second store, as a node started later: it knows no key, and
		// creates an account of its own, whose key is neither a's nor b's.
		s2 := open()
		c := storetest.NewAccount(t, s2, "initech")
		mc := send(s1, c, at.Add(3*time.Second)) // s1 learns c's key from the database

		own := map[string][]string{a.ID: {later.ID, ma.ID}, b.ID: {mb.ID}, c.ID: {mc.ID}}
		for i, s := range []*sqlstore.Store{s1, s2, open()} {
			for _, acct := range []*mailroom.Account{a, b, c} {
				checkAccountSees(t, s, i, acct, own)
			}
		}

		// An account id no account has: nothing is found, nothing taken.
		ghost := mailroom.NewID(mailroom.PrefixAccount, at)
		for i, s := range []*sqlstore.Store{s1, open()} {
			checkAccountSees(t, s, i, &mailroom.Account{ID: ghost, Name: "ghost"}, own)
			if _, _, err := s.Message(ctx, ghost, ma.ID); mailroom.ErrorCode(err) != mailroom.ECodeNotFound {
				t.Errorf("store %d: Message(ghost, %s): %v, want %s", i, ma.ID, err, mailroom.ECodeNotFound)
			}
			m := storetest.NewMessage(&mailroom.Account{ID: ghost}, at.Add(4*time.Second), "ann@x.example")
			if _, err := s.AcceptMessage(ctx, m); mailroom.ErrorCode(err) != mailroom.ECodeNotFound {
				t.Errorf("store %d: an accept for an account id no account has: %v, want %s", i, err, mailroom.ECodeNotFound)
			}
		}
		checkAccountSees(t, s1, 0, a, own) // the refused accepts left nothing

		// Mail in whatever account, first of all on a fresh store.
		s3 := open()
		if got, err := s3.ReportedMessage(ctx, mb.ID); err != nil || got.AccountID != b.ID {
			t.Errorf("ReportedMessage(%s): %+v, %v; want it in %s", mb.ID, got, err, b.ID)
		}
		s4 := open()
		if got, _, err := s4.MessageForDelivery(ctx, mc.ID); err != nil || got.AccountID != c.ID {
			t.Errorf("MessageForDelivery(%s): %+v, %v; want it in %s", mc.ID, got, err, c.ID)
		}
		s5 := open()
		claimed, err := s5.ClaimDueRecipients(ctx, mailroom.Claim{Node: "n1", Now: at.Add(time.Hour), Lease: time.Minute, Limit: 10})
		if err != nil {
			t.Fatal(err)
		}
		accountOf := map[string]string{ma.ID: a.ID, mb.ID: b.ID, mc.ID: c.ID}
		if len(claimed) != 3 {
			t.Errorf("claimed %d recipients, want 3 (ma's, mb's, mc's)", len(claimed))
		}
		for _, q := range claimed {
			if q.Message.AccountID != accountOf[q.MessageID] {
				t.Errorf("the claimed recipient of %s is in account %q, want %q", q.MessageID, q.Message.AccountID, accountOf[q.MessageID])
			}
		}
	})
}

// reopenable returns a function that opens a store over one database of
// e each time it is called, each closed when the test ends.
func reopenable(t *testing.T, e storetest.Engine) func() *sqlstore.Store {
	open, _ := storetest.Reopenable(t, e)
	return open
}

// checkAccountSees holds that acct sees its own messages (own[acct.ID],
// newest first) and their events, through the log with and without the
// filters all the accounts' messages share, the idempotency key, the
// events and the scheduled list, and none of the others'.
func checkAccountSees(t *testing.T, s *sqlstore.Store, store int, acct *mailroom.Account, own map[string][]string) {
	t.Helper()
	ctx := context.Background()
	mine := own[acct.ID]
	filters := []mailroom.MessageFilter{
		{},
		{Tags: []mailroom.TagFilter{{Key: "kind", Value: "receipt"}}},
		{To: "ann@x.example"},
		{From: "orders@shop.example"},
	}
	for _, f := range filters {
		list, _ := storetest.Try2(s.ListMessages(ctx, acct.ID, f, mailroom.Page{})).Must(t)
		want := mine
		if f.To != "" {
			want = slices.DeleteFunc(slices.Clone(mine), func(id string) bool { return len(mine) > 1 && id == mine[0] }) // the scheduled one is to bob@
		}
		if got := messageIDs(list); !reflect.DeepEqual(got, want) {
			t.Errorf("store %d: %s's log filtered by %+v lists %v, want %v", store, acct.Name, f, got, want)
		}
		for _, m := range list {
			if m.AccountID != acct.ID {
				t.Errorf("store %d: %s's log lists %s in account %q", store, acct.Name, m.ID, m.AccountID)
			}
		}
	}
	for owner, ids := range own {
		for _, id := range ids {
			m, events, err := s.Message(ctx, acct.ID, id)
			if owner != acct.ID {
				if mailroom.ErrorCode(err) != mailroom.ECodeNotFound {
					t.Errorf("store %d: %s reads another account's message %s: %v", store, acct.Name, id, err)
				}
				continue
			}
			if err != nil || m.AccountID != acct.ID || len(events) == 0 {
				t.Fatalf("store %d: %s's Message(%s): %+v, %d events, %v", store, acct.Name, id, m, len(events), err)
			}
			for _, ev := range events {
				if ev.AccountID != acct.ID {
					t.Errorf("store %d: an event of %s in account %q", store, id, ev.AccountID)
				}
			}
		}
	}
	events, _ := storetest.Try2(s.ListEvents(ctx, acct.ID, mailroom.EventFilter{}, mailroom.Page{})).Must(t)
	if len(events) != len(mine) {
		t.Errorf("store %d: %s has %d events, want %d (one a message)", store, acct.Name, len(events), len(mine))
	}
	for _, ev := range events {
		if ev.AccountID != acct.ID || !slices.Contains(mine, ev.MessageID) {
			t.Errorf("store %d: %s lists the event %+v", store, acct.Name, ev)
		}
		if got, err := s.Event(ctx, acct.ID, ev.ID); err != nil || got.ID != ev.ID || got.AccountID != acct.ID {
			t.Errorf("store %d: %s's Event(%s): %+v, %v", store, acct.Name, ev.ID, got, err)
		}
		for owner := range own {
			if owner != acct.ID {
				if _, err := s.Event(ctx, owner, ev.ID); mailroom.ErrorCode(err) != mailroom.ECodeNotFound {
					t.Errorf("store %d: another account reads %s's event %s: %v", store, acct.Name, ev.ID, err)
				}
			}
		}
	}
	keyed, err := s.IdempotentMessages(ctx, acct.ID, []string{"order-1"})
	var wantKeyed []string
	if len(mine) > 0 {
		wantKeyed = []string{mine[len(mine)-1]} // the first sent, under the key
	}
	var gotKeyed []string
	for _, k := range keyed {
		gotKeyed = append(gotKeyed, k.ID)
	}
	if err != nil || !reflect.DeepEqual(gotKeyed, wantKeyed) {
		t.Errorf("store %d: %s's IdempotentMessages(order-1): %v, %v; want %v", store, acct.Name, gotKeyed, err, wantKeyed)
	}
	res, err := s.IdempotentMessage(ctx, acct.ID, "order-1", []byte("digest-1"))
	if len(wantKeyed) == 0 {
		if mailroom.ErrorCode(err) != mailroom.ECodeNotFound {
			t.Errorf("store %d: %s's IdempotentMessage(order-1): %+v, %v; want %s", store, acct.Name, res, err, mailroom.ECodeNotFound)
		}
	} else if err != nil || res.MessageID != wantKeyed[0] || !res.Duplicate {
		t.Errorf("store %d: %s's IdempotentMessage(order-1): %+v, %v; want a duplicate of %s", store, acct.Name, res, err, wantKeyed[0])
	}
	sched, _ := storetest.Try2(s.ListScheduled(ctx, acct.ID, mailroom.Page{})).Must(t)
	var wantSched []string
	if len(mine) > 1 {
		wantSched = mine[:1]
	}
	if got := messageIDs(sched); !reflect.DeepEqual(got, wantSched) {
		t.Errorf("store %d: %s's scheduled list: %v, want %v", store, acct.Name, got, wantSched)
	}
}

// TestAccountKeysAreNotReused: an account deleted by hand (Mailroom never
// deletes one) leaves its mail behind under its key; an account created
// after it must get another key, and see none of that mail, on a store
// that never knew the deleted one.
func TestAccountKeysAreNotReused(t *testing.T) {
	storetest.Each(t, func(t *testing.T, e storetest.Engine) {
		ctx := context.Background()
		open, db := storetest.Reopenable(t, e)
		s1 := open()
		a := storetest.NewAccount(t, s1, "acme")
		at := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
		m := storetest.NewMessage(a, at, "ann@x.example")
		storetest.Try(s1.AcceptMessage(ctx, m)).Must(t)
		mustExec(t, db, `DELETE FROM accounts WHERE id = $1`, a.ID)

		b := storetest.NewAccount(t, open(), "globex")
		s2 := open()
		if got, _ := storetest.Try2(s2.ListMessages(ctx, b.ID, mailroom.MessageFilter{}, mailroom.Page{})).Must(t); len(got) != 0 {
			t.Errorf("an account created after another was deleted lists %v, the deleted one's mail", messageIDs(got))
		}
		if _, _, err := s2.Message(ctx, b.ID, m.ID); mailroom.ErrorCode(err) != mailroom.ECodeNotFound {
			t.Errorf("Message(%s) of the new account: %v, want %s", m.ID, err, mailroom.ECodeNotFound)
		}
	})
}
