package storetest_test

import (
	"context"
	"database/sql"
	"testing"
	"time"

	"github.com/mailroom/mailroom"
	"github.com/mailroom/mailroom/sqlstore"
	"github.com/mailroom/mailroom/storetest"
)

// TestRetentionLeavesNothingBehind holds retention to removing an expired
// message's recipients, tags and events with it, on both engines: on
// PostgreSQL no foreign key cascades to them (migration 00013), so rows
// left behind would pile up unseen, and the to= and tag filters of the log
// would walk them. A message not yet expired keeps all of its rows.
func TestRetentionLeavesNothingBehind(t *testing.T) {
	storetest.Each(t, func(t *testing.T, e storetest.Engine) {
		ctx := context.Background()
		s, db := openWithSQL(t, e.Name)
		acct := storetest.NewAccount(t, s, "acme")
		t0 := time.Date(2026, 11, 1, 10, 0, 0, 0, time.UTC)
		old := storetest.NewMessage(acct, t0, "a@x.example", "b@y.example")
		kept := storetest.NewMessage(acct, t0.Add(48*time.Hour), "a@x.example", "b@y.example")
		for _, m := range []*mailroom.Message{old, kept} {
			m.Tags = map[string]string{"kind": "receipt", "order": m.ID}
			if _, err := s.AcceptMessage(ctx, m); err != nil {
				t.Fatal(err)
			}
		}
		// Finished as delivery would leave them: nothing due.
		if _, err := db.ExecContext(ctx, `UPDATE recipients SET status = 'delivered', due_at = NULL`); err != nil {
			t.Fatal(err)
		}
		if n, err := s.DeleteExpiredMessages(ctx, t0.Add(24*time.Hour), 100); err != nil || n != 1 {
			t.Fatalf("retention deleted %d, %v; want the old message", n, err)
		}
		count := func(table, id string) int {
			var n int
			if err := db.QueryRowContext(ctx, `SELECT count(*) FROM `+table+` WHERE message_id = $1`, storedKey(t, id)).Scan(&n); err != nil {
				t.Fatal(err)
			}
			return n
		}
		for _, table := range []string{"recipients", "message_tags", "events"} {
			if n := count(table, old.ID); n != 0 {
				t.Errorf("%s: %d rows of the deleted message left", table, n)
			}
			if n := count(table, kept.ID); n != 2 {
				t.Errorf("%s: %d rows of the kept message, want 2", table, n)
			}
		}
	})
}

// storedKey is the key the tables that grow with the mail hold for id
// (migration 00015).
func storedKey(t testing.TB, id string) []byte {
	t.Helper()
	k, err := sqlstore.StoredKey(id)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// storedAccountKey is the key the tables that grow with the mail hold for
// the account id (migration 00016), as db's accounts table has it.
func storedAccountKey(t testing.TB, db *sql.DB, id string) int64 {
	t.Helper()
	var key int64
	if err := db.QueryRowContext(context.Background(), `SELECT key FROM accounts WHERE id = $1`, id).Scan(&key); err != nil {
		t.Fatalf("the key of account %s: %v", id, err)
	}
	return key
}
