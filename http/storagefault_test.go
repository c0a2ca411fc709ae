package http_test

import (
	"context"
	"database/sql"
	"testing"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib"

	"github.com/mailroom/mailroom/apitest"
	"github.com/mailroom/mailroom/delivery"
	mhttp "github.com/mailroom/mailroom/http"
	"github.com/mailroom/mailroom/postgres"
	"github.com/mailroom/mailroom/storetest"
)

// A database that hangs (here: a table locked by another session, so that
// queries wait instead of failing) costs a request its storage budget, not
// the write timeout: reads and commits both answer 503 with Retry-After,
// nothing half-done is stored, and the node serves again once the database
// does.
func TestHungStorageAnswers503(t *testing.T) {
	url := storetest.NewPostgresDatabase(t)
	store, err := postgres.Open(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	e := newEnvWithStore(t, store, func(s *mhttp.Server, _ *delivery.Deliverer) { s.StorageBudget = 500 * time.Millisecond })
	e.verifiedDomain(t, "shop.example")
	e.mailDomain("example.net")

	db, err := sql.Open("pgx", url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	// lock holds an exclusive lock on table until the returned function ends
	// the transaction.
	lock := func(table string) func() {
		t.Helper()
		tx, err := db.Begin()
		if err != nil {
			t.Fatal(err)
		}
		if _, err := tx.Exec("LOCK TABLE " + table + " IN ACCESS EXCLUSIVE MODE"); err != nil {
			t.Fatal(err)
		}
		return func() { _ = tx.Rollback() }
	}
	want503 := func(what string, r *apitest.Response) {
		t.Helper()
		if r.Status != 503 || r.Code() != "service_unavailable" || r.Header.Get("Retry-After") == "" {
			t.Fatalf("%s with storage hung: %d %s (Retry-After %q)", what, r.Status, r.Body, r.Header.Get("Retry-After"))
		}
	}

	// A read: the key lookup of every authenticated request.
	unlock := lock("api_keys")
	want503("a list", e.Do(apitest.Request{Method: "GET", Path: "/v1/messages", Key: e.admin}))
	unlock()
	if r := e.Do(apitest.Request{Method: "GET", Path: "/v1/messages", Key: e.admin}); r.Status != 200 {
		t.Fatalf("after the lock ended: %d %s", r.Status, r.Body)
	}

	// A commit: the accept waits on the locked table inside the group
	// commit, whose transaction is bounded.
	unlock = lock("recipients")
	want503("a send", e.send(t, map[string]any{"from": "orders@shop.example", "to": "ann@example.net",
		"subject": "Hi", "text": "Hello", "idempotencyKey": "order-1"}))
	unlock()
	if r := e.Do(apitest.Request{Method: "GET", Path: "/v1/messages", Key: e.admin}); r.Status != 200 || len(r.Map()["data"].([]any)) != 0 {
		t.Fatalf("the refused send left a message behind: %d %s", r.Status, r.Body)
	}
	// The client retries with the same key and is served.
	r := e.send(t, map[string]any{"from": "orders@shop.example", "to": "ann@example.net",
		"subject": "Hi", "text": "Hello", "idempotencyKey": "order-1"})
	if r.Status != 200 {
		t.Fatalf("the retry after the outage: %d %s", r.Status, r.Body)
	}
	e.waitStatus(t, r.Str("messageId"), "delivered")
}
