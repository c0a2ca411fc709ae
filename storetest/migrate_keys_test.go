package storetest_test

import (
	"bytes"
	"cmp"
	"context"
	"crypto/sha256"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/pressly/goose/v3"

	"github.com/mailroom/mailroom"
	"github.com/mailroom/mailroom/postgres"
	"github.com/mailroom/mailroom/sqlite"
	"github.com/mailroom/mailroom/sqlstore"
	"github.com/mailroom/mailroom/storetest"
)

// TestCompactKeysMigration holds migration 00015 (compact message keys),
// which rewrites every row of messages, recipients, message_tags and
// events: their account, message and event ids go from text ("msg_" and a
// lower-case ULID) to the ULID's 16 bytes, and request_digest is kept only
// beside an idempotency key. A mistake there loses or garbles mail that was
// stored before the upgrade, which no test on a fresh database sees.
//
// On each engine it stores, with raw SQL in the schema of version 14, an
// account's messages (one under an idempotency key, one with a digest but
// no key, one scheduled from a template), their recipients, tag rows and
// events (and an event of no message), opens the store, which applies
// 00015 (and 00016 after it: TestAccountKeysMigration), and reads all of
// it back through the store: every field, the log's filters and order, the
// events, the idempotency answers, the scheduled list, the content
// delivery reads, and retention of a migrated message. A second connection
// then checks the stored bytes themselves. Last, ids that are no ULID must
// make the migration fail, leaving the database at version 14 as it was,
// rather than store something else.
func TestCompactKeysMigration(t *testing.T) {
	storetest.Each(t, func(t *testing.T, e storetest.Engine) {
		t.Run("rows read back", func(t *testing.T) { testMigratedRows(t, e, 14) })
		t.Run("ids that are no ULID", func(t *testing.T) { testCompactKeysRefusal(t, e) })
	})
}

// oldDatabase is a fresh database of one engine, migrated up to a version
// before the one under test.
type oldDatabase struct {
	dialect     goose.Dialect
	driver, dsn string
	dir         string // the engine's migration files
	// open opens the store, which applies the migrations the database lacks.
	open func() (*sqlstore.Store, error)
}

// newOldDatabase makes a fresh database for e at version.
func newOldDatabase(t *testing.T, e storetest.Engine, version int64) *oldDatabase {
	t.Helper()
	ctx := context.Background()
	d := &oldDatabase{dir: filepath.Join("..", e.Name, "migrations")}
	switch e.Name {
	case "sqlite":
		dir := t.TempDir()
		d.dialect, d.driver = goose.DialectSQLite3, "sqlite"
		d.dsn = "file:" + filepath.Join(dir, sqlite.FileName) + "?_pragma=foreign_keys(1)"
		d.open = func() (*sqlstore.Store, error) { return sqlite.Open(ctx, dir) }
	case "postgres":
		url := storetest.NewPostgresDatabase(t)
		d.dialect, d.driver, d.dsn = goose.DialectPostgres, "pgx", url
		d.open = func() (*sqlstore.Store, error) { return postgres.Open(ctx, url) }
	default:
		t.Fatalf("no old database for engine %q", e.Name)
	}
	db := d.connect(t)
	defer db.Close()
	if _, err := d.provider(t, db).UpTo(ctx, version); err != nil {
		t.Fatal(err)
	}
	return d
}

// connect opens a raw connection to the database, beside any store.
func (d *oldDatabase) connect(t *testing.T) *sql.DB {
	t.Helper()
	db, err := sql.Open(d.driver, d.dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// provider is goose over db with the engine's migration files.
func (d *oldDatabase) provider(t *testing.T, db *sql.DB) *goose.Provider {
	t.Helper()
	p, err := goose.NewProvider(d.dialect, db, os.DirFS(d.dir))
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// mustExec runs a raw statement.
func mustExec(t *testing.T, db *sql.DB, query string, args ...any) {
	t.Helper()
	if _, err := db.ExecContext(context.Background(), query, args...); err != nil {
		t.Fatalf("%v\n in %s", err, query)
	}
}

// us is t as the store reads a time back: whole microseconds, UTC.
func us(t time.Time) time.Time { return time.UnixMicro(t.UnixMicro()).UTC() }

func usPtr(t time.Time) *time.Time { v := us(t); return &v }

// Rows as version 14 holds them (00003's tables and the columns 00004,
// 00006 and 00008 added), with their values in the store's types, and as
// version 15 does (the same columns, ids as keys).
const (
	insertOldMessage = `INSERT INTO messages (id, account_id, status, from_address, subject, category, domain,
		idempotency_key, request_digest, content, raw, created_at, scheduled_at, envelope, template_id, template_name)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16)`
	insertOldRecipient = `INSERT INTO recipients (message_id, address, account_id, kind, position, status, attempts,
		last_attempt_at, next_attempt_at, smtp_code, smtp_response, mx, queued_at, due_at, unencrypted)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15)`
	insertOldTag   = `INSERT INTO message_tags (message_id, account_id, key, value) VALUES ($1, $2, $3, $4)`
	insertOldEvent = `INSERT INTO events (id, account_id, type, data, created_at, message_id, recipient)
		VALUES ($1, $2, $3, $4, $5, $6, $7)`
)

// testMigratedRows stores rows in the schema of version (14: ids as text;
// 15: ids as their 16 bytes, request_digest only beside a key), opens the
// store, which migrates them to the newest version, and reads them back.
func testMigratedRows(t *testing.T, e storetest.Engine, version int64) {
	ctx := context.Background()
	old := newOldDatabase(t, e, version)
	db := old.connect(t)
	// id as version stores it in the tables that grow with the mail.
	sk := func(id string) any {
		if version < 15 {
			return id
		}
		return storedKey(t, id)
	}

	// Ids made at fixed times, a second apart: their order is the order
	// of creation, which the log and the events list by.
	t0 := time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC)
	t1, t2, t3 := t0.Add(time.Second), t0.Add(2*time.Second), t0.Add(3*time.Second)
	acct := mailroom.NewID(mailroom.PrefixAccount, t0)
	// An account of nothing, whose id sorts before acct's: 00016 gives it
	// key 1 and acct key 2, so that rows given the least key are seen.
	other := mailroom.NewID(mailroom.PrefixAccount, t0.Add(-time.Second))
	tpl := mailroom.NewID(mailroom.PrefixTemplate, t0)
	m1 := mailroom.NewID(mailroom.PrefixMessage, t1) // a receipt under an idempotency key, finished
	m2 := mailroom.NewID(mailroom.PrefixMessage, t2) // no key, but a digest 00015 must drop; queued
	m3 := mailroom.NewID(mailroom.PrefixMessage, t3) // scheduled, from a template
	scheduledAt := t0.Add(48 * time.Hour)
	digest1 := sha256.Sum256([]byte("the request of m1"))
	digest2 := sha256.Sum256([]byte("the request of m2"))
	raw1 := []byte("From: Shop <orders@shop.example>\r\nTo: z@x.example, Ann <a@x.example>\r\nSubject: Your receipt\r\n\r\nThanks.\r\n")

	mustExec(t, db, `INSERT INTO accounts (id, name, created_at) VALUES ($1, 'acme', $2)`, acct, t0.UnixMicro())
	mustExec(t, db, `INSERT INTO accounts (id, name, created_at) VALUES ($1, 'other', $2)`, other, t0.UnixMicro())

	// The messages, content as the accept path wrote it before 00015
	// (the envelope's keys repeated in it), envelope as 00006 made it.
	mustExec(t, db, insertOldMessage, sk(m1), sk(acct), "partially_delivered", "orders@shop.example", "Your receipt", "transactional",
		"shop.example", "order-42", digest1[:],
		`{"from":{"name":"Shop","address":"orders@shop.example"},"to":[{"address":"z@x.example"},{"name":"Ann","address":"a@x.example"}],`+
			`"text":"Thanks.","tags":{"kind":"receipt","order":"42","shop":"main"},"messageIdHeader":"m1@shop.example"}`,
		raw1, t1.UnixMicro(), nil,
		`{"from":{"name":"Shop","address":"orders@shop.example"},"to":[{"address":"z@x.example"},{"name":"Ann","address":"a@x.example"}],`+
			`"tags":{"kind":"receipt","order":"42","shop":"main"}}`,
		nil, nil)
	digest2Stored := any(digest2[:]) // 00015 drops it: no key
	if version >= 15 {
		digest2Stored = nil
	}
	mustExec(t, db, insertOldMessage, sk(m2), sk(acct), "queued", "Orders@Shop.example", "Reset your password", "transactional",
		"shop.example", nil, digest2Stored,
		`{"from":{"address":"Orders@Shop.example"},"to":[{"address":"r@x.example"}],"html":"\u003cp\u003eReset\u003c/p\u003e","text":"Reset",`+
			`"headers":[{"name":"X-Ticket","value":"7"}],"attachments":[{"filename":"r.pdf","contentType":"application/pdf","content":"JVBERi0="}],`+
			`"tags":{"kind":"reset"},"messageIdHeader":"m2@shop.example"}`,
		nil, t2.UnixMicro(), nil,
		`{"from":{"address":"Orders@Shop.example"},"to":[{"address":"r@x.example"}],"tags":{"kind":"reset"}}`,
		nil, nil)
	mustExec(t, db, insertOldMessage, sk(m3), sk(acct), "scheduled", "news@shop.example", "Spring sale", "marketing",
		"shop.example", nil, nil,
		`{"from":{"address":"news@shop.example"},"to":[{"address":"d@z.example"}],"cc":[{"name":"Eve","address":"e@z.example"}],`+
			`"html":"\u003cp\u003eSale\u003c/p\u003e","text":"Sale","tags":{"kind":"promo","shop":"main"},"messageIdHeader":"m3@shop.example"}`,
		nil, t3.UnixMicro(), scheduledAt.UnixMicro(),
		`{"from":{"address":"news@shop.example"},"to":[{"address":"d@z.example"}],"cc":[{"name":"Eve","address":"e@z.example"}],`+
			`"tags":{"kind":"promo","shop":"main"},"template":{"id":"`+tpl+`","name":"spring-sale","version":3}}`,
		tpl, "spring-sale")

	// The recipients, m1's in another order than their positions: z@ is
	// first in the request, a@ first by address (the primary key).
	mustExec(t, db, insertOldRecipient, sk(m1), "a@x.example", sk(acct), "to", 1, "bounced", 2,
		t1.Add(800*time.Millisecond).UnixMicro(), nil, 550, "550 5.1.1 <a@x.example>: user unknown", "mx1.x.example",
		t1.UnixMicro(), nil, true)
	mustExec(t, db, insertOldRecipient, sk(m1), "z@x.example", sk(acct), "to", 0, "delivered", 1,
		t1.Add(500*time.Millisecond).UnixMicro(), nil, 250, "250 2.0.0 Ok: queued as 4F2A", "mx1.x.example",
		t1.UnixMicro(), nil, false)
	mustExec(t, db, insertOldRecipient, sk(m2), "r@x.example", sk(acct), "to", 0, "queued", 0,
		nil, t2.UnixMicro(), nil, nil, nil, t2.UnixMicro(), t2.UnixMicro(), false)
	mustExec(t, db, insertOldRecipient, sk(m3), "d@z.example", sk(acct), "to", 0, "scheduled", 0,
		nil, nil, nil, nil, nil, t3.UnixMicro(), scheduledAt.UnixMicro(), false)
	mustExec(t, db, insertOldRecipient, sk(m3), "e@z.example", sk(acct), "cc", 1, "scheduled", 0,
		nil, nil, nil, nil, nil, t3.UnixMicro(), scheduledAt.UnixMicro(), false)

	// The tag rows, as the envelopes have them.
	tags := []struct{ message, key, value string }{
		{m1, "kind", "receipt"}, {m1, "order", "42"}, {m1, "shop", "main"},
		{m2, "kind", "reset"},
		{m3, "kind", "promo"}, {m3, "shop", "main"},
	}
	for _, tg := range tags {
		mustExec(t, db, insertOldTag, sk(tg.message), sk(acct), tg.key, tg.value)
	}

	// The events: the messages' timelines, and a domain's, of no message.
	ev := func(typ string, at time.Time, message, rcpt, data string) *mailroom.Event {
		return &mailroom.Event{ID: mailroom.NewID(mailroom.PrefixEvent, at), AccountID: acct, Type: typ, CreatedAt: us(at),
			MessageID: message, Recipient: rcpt, Data: []byte(data)}
	}
	e1 := ev(mailroom.EventEmailQueued, t1.Add(100*time.Millisecond), m1, "z@x.example", `{"recipient":"z@x.example"}`)
	e2 := ev(mailroom.EventEmailDelivered, t1.Add(500*time.Millisecond), m1, "z@x.example", `{"recipient":"z@x.example","smtpCode":250}`)
	e3 := ev(mailroom.EventEmailBounced, t1.Add(800*time.Millisecond), m1, "a@x.example", `{"recipient":"a@x.example","smtpCode":550}`)
	e4 := ev(mailroom.EventEmailQueued, t2.Add(100*time.Millisecond), m2, "r@x.example", `{"recipient":"r@x.example"}`)
	e5 := ev(mailroom.EventEmailScheduled, t3.Add(100*time.Millisecond), m3, "d@z.example", `{"recipient":"d@z.example"}`)
	e6 := ev(mailroom.EventDomainVerified, t0.Add(10*time.Second), "", "", `{"domain":"shop.example"}`)
	events := []*mailroom.Event{e1, e2, e3, e4, e5, e6}
	for _, x := range events {
		var message, rcpt any
		if x.MessageID != "" {
			message, rcpt = sk(x.MessageID), x.Recipient
		}
		mustExec(t, db, insertOldEvent, sk(x.ID), sk(x.AccountID), x.Type, string(x.Data), x.CreatedAt.UnixMicro(), message, rcpt)
	}
	db.Close()

	s, err := old.open()
	if err != nil {
		t.Fatalf("open the store on version %d's rows (migrations from %d): %v", version, version+1, err)
	}
	defer s.Close()

	// First, a read of a message in whatever account, while the store
	// knows no account's key: it finds the account by the row's key.
	if got, err := s.ReportedMessage(ctx, m1); err != nil || got.AccountID != acct {
		t.Fatalf("ReportedMessage(%s) first of all: %+v, %v; want it in %s", m1, got, err, acct)
	}

	// The messages as the log shows them, recipients in their order.
	want := map[string]*mailroom.Message{
		m1: {ID: m1, AccountID: acct, Status: mailroom.MessagePartiallyDelivered,
			From:    mailroom.Address{Name: "Shop", Address: "orders@shop.example"},
			To:      []mailroom.Address{{Address: "z@x.example"}, {Name: "Ann", Address: "a@x.example"}},
			Subject: "Your receipt", Category: mailroom.CategoryTransactional,
			Tags:   map[string]string{"kind": "receipt", "order": "42", "shop": "main"},
			Domain: "shop.example", IdempotencyKey: "order-42", CreatedAt: us(t1),
			Recipients: []*mailroom.Recipient{
				{MessageID: m1, Address: "z@x.example", Kind: mailroom.KindTo, Status: mailroom.RecipientDelivered, Attempts: 1,
					LastAttemptAt: usPtr(t1.Add(500 * time.Millisecond)), SMTPCode: 250, SMTPResponse: "250 2.0.0 Ok: queued as 4F2A",
					MX: "mx1.x.example"},
				{MessageID: m1, Address: "a@x.example", Kind: mailroom.KindTo, Status: mailroom.RecipientBounced, Attempts: 2,
					LastAttemptAt: usPtr(t1.Add(800 * time.Millisecond)), SMTPCode: 550, SMTPResponse: "550 5.1.1 <a@x.example>: user unknown",
					MX: "mx1.x.example", Unencrypted: true},
			}},
		m2: {ID: m2, AccountID: acct, Status: mailroom.MessageQueued,
			From:    mailroom.Address{Address: "Orders@Shop.example"},
			To:      []mailroom.Address{{Address: "r@x.example"}},
			Subject: "Reset your password", Category: mailroom.CategoryTransactional,
			Tags: map[string]string{"kind": "reset"}, Domain: "shop.example", CreatedAt: us(t2),
			Recipients: []*mailroom.Recipient{
				{MessageID: m2, Address: "r@x.example", Kind: mailroom.KindTo, Status: mailroom.RecipientQueued, NextAttemptAt: usPtr(t2)},
			}},
		m3: {ID: m3, AccountID: acct, Status: mailroom.MessageScheduled,
			From:    mailroom.Address{Address: "news@shop.example"},
			To:      []mailroom.Address{{Address: "d@z.example"}},
			Cc:      []mailroom.Address{{Name: "Eve", Address: "e@z.example"}},
			Subject: "Spring sale", Category: mailroom.CategoryMarketing,
			Tags:     map[string]string{"kind": "promo", "shop": "main"},
			Template: &mailroom.TemplateRef{ID: tpl, Name: "spring-sale", Version: 3},
			Domain:   "shop.example", CreatedAt: us(t3), ScheduledAt: usPtr(scheduledAt),
			Recipients: []*mailroom.Recipient{
				{MessageID: m3, Address: "d@z.example", Kind: mailroom.KindTo, Status: mailroom.RecipientScheduled},
				{MessageID: m3, Address: "e@z.example", Kind: mailroom.KindCc, Status: mailroom.RecipientScheduled},
			}},
	}
	timelines := map[string][]*mailroom.Event{m1: {e1, e2, e3}, m2: {e4}, m3: {e5}}
	for _, id := range []string{m1, m2, m3} {
		got, timeline, err := s.Message(ctx, acct, id)
		if err != nil {
			t.Fatalf("Message(%s): %v", id, err)
		}
		checkMessage(t, "Message("+id+")", got, want[id])
		checkEvents(t, "the timeline of "+id, timeline, timelines[id])
	}
	if _, _, err := s.Message(ctx, other, m1); mailroom.ErrorCode(err) != mailroom.ECodeNotFound {
		t.Errorf("another account's Message(%s): %v, want %s", m1, err, mailroom.ECodeNotFound)
	}

	// The log: newest first, whole, in pages, and through each filter.
	list, _ := storetest.Try2(s.ListMessages(ctx, acct, mailroom.MessageFilter{}, mailroom.Page{})).Must(t)
	if len(list) != 3 {
		t.Fatalf("the log lists %d migrated messages, want 3: %v", len(list), messageIDs(list))
	}
	for i, id := range []string{m3, m2, m1} {
		checkMessage(t, fmt.Sprintf("the log's message %d", i), list[i], want[id])
	}
	page, next := storetest.Try2(s.ListMessages(ctx, acct, mailroom.MessageFilter{}, mailroom.Page{Limit: 2})).Must(t)
	rest, last := storetest.Try2(s.ListMessages(ctx, acct, mailroom.MessageFilter{}, mailroom.Page{Limit: 2, Cursor: next})).Must(t)
	if got := append(messageIDs(page), messageIDs(rest)...); next == "" || last != "" || !reflect.DeepEqual(got, []string{m3, m2, m1}) {
		t.Errorf("the log in pages of 2 lists %v (cursors %q, %q), want [%s %s %s]", got, next, last, m3, m2, m1)
	}
	since, until := t2, t2
	filters := []struct {
		name string
		f    mailroom.MessageFilter
		want []string
	}{
		{"tag shop:main", mailroom.MessageFilter{Tags: []mailroom.TagFilter{{Key: "shop", Value: "main"}}}, []string{m3, m1}},
		{"tags kind:receipt shop:main", mailroom.MessageFilter{Tags: []mailroom.TagFilter{{Key: "kind", Value: "receipt"}, {Key: "shop", Value: "main"}}}, []string{m1}},
		{"tag kind:reset", mailroom.MessageFilter{Tags: []mailroom.TagFilter{{Key: "kind", Value: "reset"}}}, []string{m2}},
		{"tag order:42", mailroom.MessageFilter{Tags: []mailroom.TagFilter{{Key: "order", Value: "42"}}}, []string{m1}},
		{"tag kind:none", mailroom.MessageFilter{Tags: []mailroom.TagFilter{{Key: "kind", Value: "none"}}}, nil},
		{"to A@X.example", mailroom.MessageFilter{To: "A@X.example"}, []string{m1}},
		{"to a cc", mailroom.MessageFilter{To: "e@z.example"}, []string{m3}},
		{"to and tag", mailroom.MessageFilter{To: "z@x.example", Tags: []mailroom.TagFilter{{Key: "shop", Value: "main"}}}, []string{m1}},
		{"from", mailroom.MessageFilter{From: "orders@SHOP.example"}, []string{m2, m1}},
		{"status", mailroom.MessageFilter{Status: mailroom.MessageQueued}, []string{m2}},
		{"category", mailroom.MessageFilter{Category: mailroom.CategoryMarketing}, []string{m3}},
		{"template name", mailroom.MessageFilter{Template: "spring-sale"}, []string{m3}},
		{"template id", mailroom.MessageFilter{Template: tpl}, []string{m3}},
		{"since", mailroom.MessageFilter{Since: &since}, []string{m3, m2}},
		{"until", mailroom.MessageFilter{Until: &until}, []string{m1}},
		{"since and tag", mailroom.MessageFilter{Since: &since, Tags: []mailroom.TagFilter{{Key: "shop", Value: "main"}}}, []string{m3}},
	}
	for _, c := range filters {
		got, _ := storetest.Try2(s.ListMessages(ctx, acct, c.f, mailroom.Page{})).Must(t)
		if ids := messageIDs(got); !reflect.DeepEqual(ids, c.want) {
			t.Errorf("the log filtered by %s lists %v, want %v", c.name, ids, c.want)
		}
	}
	if got, _ := storetest.Try2(s.ListMessages(ctx, other, mailroom.MessageFilter{}, mailroom.Page{})).Must(t); len(got) != 0 {
		t.Errorf("another account's log lists %v, want nothing", messageIDs(got))
	}

	// The events: by id, listed newest first, and through the filters.
	for _, x := range events {
		got, err := s.Event(ctx, acct, x.ID)
		if err != nil {
			t.Fatalf("Event(%s): %v", x.ID, err)
		}
		checkEvents(t, "Event("+x.ID+")", []*mailroom.Event{got}, []*mailroom.Event{x})
	}
	eventLists := []struct {
		name string
		f    mailroom.EventFilter
		want []*mailroom.Event
	}{
		{"all", mailroom.EventFilter{}, []*mailroom.Event{e6, e5, e4, e3, e2, e1}},
		{"of m1", mailroom.EventFilter{MessageID: m1}, []*mailroom.Event{e3, e2, e1}},
		{"of type email.queued", mailroom.EventFilter{Type: mailroom.EventEmailQueued}, []*mailroom.Event{e4, e1}},
		{"since t2", mailroom.EventFilter{Since: &since}, []*mailroom.Event{e6, e5, e4}},
	}
	for _, c := range eventLists {
		got, _ := storetest.Try2(s.ListEvents(ctx, acct, c.f, mailroom.Page{})).Must(t)
		checkEvents(t, "the events "+c.name, got, c.want)
	}

	// The idempotency key answers retries: the same request is a
	// duplicate of m1, another one is refused.
	if got, err := s.IdempotentMessage(ctx, acct, "order-42", digest1[:]); err != nil ||
		got != (mailroom.AcceptResult{MessageID: m1, Status: mailroom.MessagePartiallyDelivered, Duplicate: true}) {
		t.Errorf("IdempotentMessage(order-42) with its request's digest: %+v, %v; want a duplicate of %s", got, err, m1)
	}
	if _, err := s.IdempotentMessage(ctx, acct, "order-42", digest2[:]); mailroom.ErrorCode(err) != mailroom.ECodeIdempotencyKeyReused {
		t.Errorf("IdempotentMessage(order-42) with another digest: %v, want %s", err, mailroom.ECodeIdempotencyKeyReused)
	}
	if _, err := s.IdempotentMessage(ctx, other, "order-42", digest1[:]); mailroom.ErrorCode(err) != mailroom.ECodeNotFound {
		t.Errorf("another account's IdempotentMessage(order-42): %v, want %s", err, mailroom.ECodeNotFound)
	}
	keyed := storetest.Try(s.IdempotentMessages(ctx, acct, []string{"order-42", "order-43"})).Must(t)
	if want := (map[string]mailroom.KeyedMessage{"order-42": {ID: m1, Status: mailroom.MessagePartiallyDelivered, RequestDigest: digest1[:]}}); !reflect.DeepEqual(keyed, want) {
		t.Errorf("IdempotentMessages: %+v, want %+v", keyed, want)
	}

	// The scheduled list, and what delivery reads: m1's signed bytes,
	// the content of the others (00015 may trim content's copy of the
	// envelope, never the rest).
	sched, _ := storetest.Try2(s.ListScheduled(ctx, acct, mailroom.Page{})).Must(t)
	if len(sched) != 1 {
		t.Fatalf("ListScheduled lists %v, want [%s]", messageIDs(sched), m3)
	}
	checkMessage(t, "ListScheduled", sched[0], want[m3])
	if _, raw, err := s.MessageForDelivery(ctx, m1); err != nil || !bytes.Equal(raw, raw1) {
		t.Errorf("MessageForDelivery(%s): %q, %v; want its stored bytes", m1, raw, err)
	}
	contents := map[string]*mailroom.Message{
		m2: {HTML: "<p>Reset</p>", Text: "Reset", Headers: []mailroom.Header{{Name: "X-Ticket", Value: "7"}},
			Attachments:     []mailroom.Attachment{{Filename: "r.pdf", ContentType: "application/pdf", Content: []byte("%PDF-")}},
			MessageIDHeader: "m2@shop.example"},
		m3: {HTML: "<p>Sale</p>", Text: "Sale", MessageIDHeader: "m3@shop.example"},
	}
	for _, id := range []string{m2, m3} {
		got, raw, err := s.MessageForDelivery(ctx, id)
		if err != nil || raw != nil {
			t.Fatalf("MessageForDelivery(%s): raw %q, %v; want its content", id, raw, err)
		}
		w := want[id]
		c := contents[id]
		if got.ID != id || got.AccountID != acct || got.Subject != w.Subject || !reflect.DeepEqual(got.From, w.From) ||
			!reflect.DeepEqual(got.To, w.To) || !reflect.DeepEqual(got.Cc, w.Cc) || !reflect.DeepEqual(got.Tags, w.Tags) ||
			got.HTML != c.HTML || got.Text != c.Text || !reflect.DeepEqual(got.Headers, c.Headers) ||
			!reflect.DeepEqual(got.Attachments, c.Attachments) || got.MessageIDHeader != c.MessageIDHeader {
			t.Errorf("MessageForDelivery(%s):\n got  %+v\n want the envelope of %+v\n and the content of %+v", id, got, w, c)
		}
	}

	// The stored rows themselves, through a second connection: every
	// message and event id is the 16 bytes of its ULID, the account is its
	// integer key (00016: 1, 2, … in the order of the accounts' ids), and
	// request_digest is left only beside an idempotency key.
	db = old.connect(t)
	k := func(id string) []byte { return storedKey(t, id) } // sqlstore.StoredKey (retention_test.go)
	byID := []string{acct, other}
	slices.Sort(byID)
	checkRows(t, db, "accounts", `SELECT id, key FROM accounts ORDER BY id`, [][]any{{byID[0], int64(1)}, {byID[1], int64(2)}})
	ak := storedAccountKey(t, db, acct)
	checkRows(t, db, "messages", `SELECT id, account_id, idempotency_key, request_digest FROM messages ORDER BY id`,
		[][]any{
			{k(m1), ak, "order-42", digest1[:]},
			{k(m2), ak, nil, nil},
			{k(m3), ak, nil, nil},
		})
	checkRows(t, db, "recipients", `SELECT message_id, account_id, address, position FROM recipients ORDER BY message_id, address`,
		[][]any{
			{k(m1), ak, "a@x.example", int64(1)},
			{k(m1), ak, "z@x.example", int64(0)},
			{k(m2), ak, "r@x.example", int64(0)},
			{k(m3), ak, "d@z.example", int64(0)},
			{k(m3), ak, "e@z.example", int64(1)},
		})
	// In the query's order: a message's key sorts as its text does.
	slices.SortFunc(tags, func(a, b struct{ message, key, value string }) int {
		return cmp.Or(strings.Compare(a.key, b.key), strings.Compare(a.value, b.value), strings.Compare(a.message, b.message))
	})
	var tagRows [][]any
	for _, tg := range tags {
		tagRows = append(tagRows, []any{ak, tg.key, tg.value, k(tg.message)})
	}
	checkRows(t, db, "message_tags", `SELECT account_id, key, value, message_id FROM message_tags ORDER BY key, value, message_id`, tagRows)
	var eventRows [][]any
	for _, x := range events {
		var message any
		if x.MessageID != "" {
			message = k(x.MessageID)
		}
		eventRows = append(eventRows, []any{k(x.ID), ak, message})
	}
	checkRows(t, db, "events", `SELECT id, account_id, message_id FROM events ORDER BY id`, eventRows)

	// Retention removes a migrated message with all of its rows: it finds
	// its tag rows by its envelope's tags and its key.
	if n, err := s.DeleteExpiredMessages(ctx, t0.Add(time.Hour), 10); err != nil || n != 1 {
		t.Fatalf("DeleteExpiredMessages: %d, %v; want %s, the one finished message, deleted", n, err, m1)
	}
	if _, _, err := s.Message(ctx, acct, m1); mailroom.ErrorCode(err) != mailroom.ECodeNotFound {
		t.Errorf("Message(%s) after retention: %v, want %s", m1, err, mailroom.ECodeNotFound)
	}
	for _, table := range []string{"recipients", "message_tags", "events"} {
		var n int
		if err := db.QueryRowContext(ctx, `SELECT count(*) FROM `+table+` WHERE message_id = $1`, k(m1)).Scan(&n); err != nil {
			t.Fatal(err)
		}
		if n != 0 {
			t.Errorf("retention left %d %s rows of %s", n, table, m1)
		}
	}
	got, _ := storetest.Try2(s.ListMessages(ctx, acct, mailroom.MessageFilter{Tags: []mailroom.TagFilter{{Key: "shop", Value: "main"}}}, mailroom.Page{})).Must(t)
	if ids := messageIDs(got); !reflect.DeepEqual(ids, []string{m3}) {
		t.Errorf("the log filtered by tag shop:main after retention lists %v, want [%s]", ids, m3)
	}
	if got, _ := storetest.Try2(s.ListEvents(ctx, acct, mailroom.EventFilter{}, mailroom.Page{})).Must(t); len(got) != 3 {
		t.Errorf("after retention %d events are listed, want 3 (m2's, m3's and the domain's)", len(got))
	}

	// An account created after the migration gets the next key, and
	// none of the migrated mail.
	fresh := storetest.NewAccount(t, s, "initech")
	if key := storedAccountKey(t, db, fresh.ID); key != 3 {
		t.Errorf("an account created after the migration has the key %d, want 3", key)
	}
	if got, _ := storetest.Try2(s.ListMessages(ctx, fresh.ID, mailroom.MessageFilter{}, mailroom.Page{})).Must(t); len(got) != 0 {
		t.Errorf("an account created after the migration lists %v", messageIDs(got))
	}
}

// testCompactKeysRefusal stores, each in a fresh database at version 14,
// a row with an id that is no ULID in each of the id columns 00015
// converts (a message's id, an account's id as messages hold it, an
// event's id, an event's message id): opening the store must fail, and
// leave the database at version 14 with the row as it was.
func testCompactKeysRefusal(t *testing.T, e storetest.Engine) {
	ctx := context.Background()
	at := time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC)
	goodAcct := mailroom.NewID(mailroom.PrefixAccount, at)
	goodMsg := mailroom.NewID(mailroom.PrefixMessage, at)
	cases := []struct {
		name, bad string
		acct, msg string // the ids of the account and the message stored
		event     string // an event's id, "" for none
		eventMsg  string // its message id
	}{
		{name: "message id", bad: "msg_notaulid", acct: goodAcct, msg: "msg_notaulid"},
		{name: "account id", bad: "acct_notaulid", acct: "acct_notaulid", msg: goodMsg},
		// 26 characters of the alphabet, but above the largest ULID.
		{name: "event id", bad: "evt_8zzzzzzzzzzzzzzzzzzzzzzz", acct: goodAcct, msg: goodMsg,
			event: "evt_8zzzzzzzzzzzzzzzzzzzzzzz", eventMsg: goodMsg},
		{name: "event's message id", bad: "msg_01m8dw8xw8vm5nhcd95am6tk5", acct: goodAcct, msg: goodMsg,
			event: mailroom.NewID(mailroom.PrefixEvent, at), eventMsg: "msg_01m8dw8xw8vm5nhcd95am6tk5"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			old := newOldDatabase(t, e, 14)
			db := old.connect(t)
			mustExec(t, db, `INSERT INTO accounts (id, name, created_at) VALUES ($1, 'acme', 0)`, c.acct)
			mustExec(t, db, insertOldMessage, c.msg, c.acct, "queued", "a@shop.example", "Hi", "transactional", "shop.example",
				nil, nil, `{"text":"Hi","messageIdHeader":"x@shop.example"}`, nil, at.UnixMicro(), nil,
				`{"from":{"address":"a@shop.example"},"to":[{"address":"b@x.example"}]}`, nil, nil)
			if c.event != "" {
				mustExec(t, db, insertOldEvent, c.event, c.acct, mailroom.EventEmailQueued, `{}`, at.UnixMicro(), c.eventMsg, nil)
			}
			db.Close()

			s, err := old.open()
			if err == nil {
				s.Close()
				t.Fatalf("the store opened on a stored %s %q; migration 00015 must refuse it", c.name, c.bad)
			}
			if !strings.Contains(err.Error(), c.bad) {
				t.Errorf("opening failed with %q, which does not name %q", err, c.bad)
			}
			db = old.connect(t)
			if v, err := old.provider(t, db).GetDBVersion(ctx); err != nil || v != 14 {
				t.Errorf("after the failed migration the database is at version %d (%v), want 14", v, err)
			}
			checkRows(t, db, "messages", `SELECT id, account_id FROM messages`, [][]any{{c.msg, c.acct}})
		})
	}
}

// checkMessage compares a message as the log reads it with want, field by
// field and recipient by recipient, so that a failure says which.
func checkMessage(t *testing.T, what string, got, want *mailroom.Message) {
	t.Helper()
	g, w := *got, *want
	g.Recipients, w.Recipients = nil, nil
	if !reflect.DeepEqual(g, w) {
		t.Errorf("%s:\n got  %+v\n want %+v", what, g, w)
	}
	if len(got.Recipients) != len(want.Recipients) {
		t.Errorf("%s has %d recipients, want %d", what, len(got.Recipients), len(want.Recipients))
		return
	}
	for i := range got.Recipients {
		if !reflect.DeepEqual(got.Recipients[i], want.Recipients[i]) {
			t.Errorf("%s, recipient %d:\n got  %+v\n want %+v", what, i, *got.Recipients[i], *want.Recipients[i])
		}
	}
}

// checkEvents compares events, in order.
func checkEvents(t *testing.T, what string, got, want []*mailroom.Event) {
	t.Helper()
	if len(got) != len(want) {
		t.Errorf("%s: %d events %v, want %d %v", what, len(got), eventIDs(got), len(want), eventIDs(want))
		return
	}
	for i := range got {
		g, w := *got[i], *want[i]
		if g.ID != w.ID || g.AccountID != w.AccountID || g.Type != w.Type || !g.CreatedAt.Equal(w.CreatedAt) ||
			g.MessageID != w.MessageID || g.Recipient != w.Recipient || string(g.Data) != string(w.Data) {
			t.Errorf("%s, event %d:\n got  %+v (data %s)\n want %+v (data %s)", what, i, g, g.Data, w, w.Data)
		}
	}
}

// checkRows compares a query's rows with want, values as both drivers
// hand them over: []byte for a blob, string, int64, nil for NULL. A
// column named *id that holds bytes must hold 16.
func checkRows(t *testing.T, db *sql.DB, what, query string, want [][]any) {
	t.Helper()
	rows, err := db.QueryContext(context.Background(), query)
	if err != nil {
		t.Fatalf("%v\n in %s", err, query)
	}
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		t.Fatal(err)
	}
	var got [][]any
	for rows.Next() {
		row := make([]any, len(cols))
		ptrs := make([]any, len(cols))
		for i := range row {
			ptrs[i] = &row[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			t.Fatal(err)
		}
		got = append(got, row)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("stored %s rows:\n got  %s\n want %s", what, formatRows(got), formatRows(want))
	}
	for _, row := range got {
		for i, v := range row {
			if b, ok := v.([]byte); ok && strings.HasSuffix(cols[i], "id") && len(b) != 16 {
				t.Errorf("stored %s.%s of %d bytes, want 16", what, cols[i], len(b))
			}
		}
	}
}

func formatRows(rows [][]any) string {
	var b strings.Builder
	for _, row := range rows {
		b.WriteString("\n   ")
		for _, v := range row {
			if x, ok := v.([]byte); ok {
				fmt.Fprintf(&b, " %x", x)
			} else {
				fmt.Fprintf(&b, " %v", v)
			}
		}
	}
	return b.String()
}

func messageIDs(ms []*mailroom.Message) []string {
	var ids []string
	for _, m := range ms {
		ids = append(ids, m.ID)
	}
	return ids
}

func eventIDs(es []*mailroom.Event) []string {
	var ids []string
	for _, e := range es {
		ids = append(ids, e.ID)
	}
	return ids
}
