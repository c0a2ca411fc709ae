package storetest_test

import (
	"context"
	"database/sql"
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"github.com/pressly/goose/v3"

	"github.com/mailroom/mailroom"
	"github.com/mailroom/mailroom/postgres"
	"github.com/mailroom/mailroom/sqlite"
	"github.com/mailroom/mailroom/sqlstore"
	"github.com/mailroom/mailroom/storetest"
)

// TestEnvelopeMigration stores messages as they were before migration 00006
// (addresses and tags only inside content), migrates, and reads them
// through the log: the migration must have copied every address, name and
// tag into the envelope, and left out what content lacked.
func TestEnvelopeMigration(t *testing.T) {
	ctx := context.Background()
	storetest.Each(t, func(t *testing.T, e storetest.Engine) {
		// Each engine: its dialect, its migration files, and how to open
		// the store (which applies the rest) once the old rows are in.
		var dialect goose.Dialect
		var driver, dsn string
		var open func() (*sqlstore.Store, error)
		switch e.Name {
		case "sqlite":
			dir := t.TempDir()
			dialect, driver = goose.DialectSQLite3, "sqlite"
			dsn = "file:" + filepath.Join(dir, sqlite.FileName) + "?_pragma=foreign_keys(1)"
			open = func() (*sqlstore.Store, error) { return sqlite.Open(ctx, dir) }
		case "postgres":
			url := storetest.NewPostgresDatabase(t)
			dialect, driver, dsn = goose.DialectPostgres, "pgx", url
			open = func() (*sqlstore.Store, error) { return postgres.Open(ctx, url) }
		}
		db, err := sql.Open(driver, dsn)
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		p, err := goose.NewProvider(dialect, db, os.DirFS(filepath.Join("..", e.Name, "migrations")))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := p.UpTo(ctx, 3); err != nil {
			t.Fatal(err)
		}

		at := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
		acct := mailroom.NewID(mailroom.PrefixAccount, at)
		full, bare := mailroom.NewID(mailroom.PrefixMessage, at), mailroom.NewID(mailroom.PrefixMessage, at.Add(time.Second))
		// content as the accept path wrote it before 00006 (Go's
		// encoding/json: HTML characters escaped, empty fields omitted).
		rows := []struct{ id, content string }{
			{full, `{"from":{"name":"Shop \u003cInc\u003e","address":"orders@shop.example"},` +
				`"to":[{"address":"a@x.example"},{"name":"Bé","address":"b@x.example"}],` +
				`"cc":[{"name":"Carbon","address":"c@y.example"}],"bcc":[{"address":"d@z.example"}],` +
				`"replyTo":[{"address":"help@shop.example"}],"html":"\u003cp\u003eHi\u003c/p\u003e","text":"Hi",` +
				`"attachments":[{"filename":"r.pdf","contentType":"application/pdf","content":"JVBERi0="}],` +
				`"tags":{"kind":"receipt","order":"42"},"messageIdHeader":"x@shop.example"}`},
			{bare, `{"from":{"address":"orders@shop.example"},"to":[{"address":"e@x.example"}],"text":"Hi","messageIdHeader":"y@shop.example"}`},
		}
		if _, err := db.ExecContext(ctx, `INSERT INTO accounts (id, name, created_at) VALUES ($1, 'acme', 0)`, acct); err != nil {
			t.Fatal(err)
		}
		for i, r := range rows {
			if _, err := db.ExecContext(ctx, `INSERT INTO messages (id, account_id, status, from_address, subject, category,
				domain, content, created_at) VALUES ($1, $2, 'queued', 'orders@shop.example', 'Hi', 'transactional',
				'shop.example', $3, $4)`, r.id, acct, r.content, at.Add(time.Duration(i)*time.Second).UnixMicro()); err != nil {
				t.Fatal(err)
			}
		}
		db.Close()

		s, err := open()
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		want := map[string]*mailroom.Message{
			full: {
				From:    mailroom.Address{Name: "Shop <Inc>", Address: "orders@shop.example"},
				To:      []mailroom.Address{{Address: "a@x.example"}, {Name: "Bé", Address: "b@x.example"}},
				Cc:      []mailroom.Address{{Name: "Carbon", Address: "c@y.example"}},
				Bcc:     []mailroom.Address{{Address: "d@z.example"}},
				ReplyTo: []mailroom.Address{{Address: "help@shop.example"}},
				Tags:    map[string]string{"kind": "receipt", "order": "42"},
			},
			bare: {From: mailroom.Address{Address: "orders@shop.example"}, To: []mailroom.Address{{Address: "e@x.example"}}},
		}
		list, _, err := s.ListMessages(ctx, acct, mailroom.MessageFilter{}, mailroom.Page{})
		if err != nil {
			t.Fatal(err)
		}
		if len(list) != 2 {
			t.Fatalf("listed %d migrated messages, want 2", len(list))
		}
		for _, got := range list {
			w := want[got.ID]
			if w == nil {
				t.Fatalf("listed an unknown message %s", got.ID)
			}
			if !reflect.DeepEqual(got.From, w.From) || !reflect.DeepEqual(got.To, w.To) || !reflect.DeepEqual(got.Cc, w.Cc) ||
				!reflect.DeepEqual(got.Bcc, w.Bcc) || !reflect.DeepEqual(got.ReplyTo, w.ReplyTo) || !reflect.DeepEqual(got.Tags, w.Tags) {
				t.Errorf("migrated %s:\n got  from %#v to %#v cc %#v bcc %#v replyTo %#v tags %#v\n want from %#v to %#v cc %#v bcc %#v replyTo %#v tags %#v",
					got.ID, got.From, got.To, got.Cc, got.Bcc, got.ReplyTo, got.Tags, w.From, w.To, w.Cc, w.Bcc, w.ReplyTo, w.Tags)
			}
		}
	})
}
