package suppression_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/mailroom/mailroom"
	"github.com/mailroom/mailroom/storetest"
	"github.com/mailroom/mailroom/suppression"
)

// TestSuppressionsAdd holds the service to its rule on a real SQLite store:
// the first add creates a manual entry, a second add of the address (in any
// case) finds it, and an address suppressed by a hard bounce keeps its
// entry and its reason.
func TestSuppressionsAdd(t *testing.T) {
	ctx := context.Background()
	store := storetest.SQLite.Open(t)
	acct := storetest.NewAccount(t, store, "acme")
	now := time.Date(2026, 11, 22, 10, 0, 0, 123456789, time.UTC)
	svc := &suppression.Service{Store: store, Now: func() time.Time { now = now.Add(time.Second); return now }}

	sup, created, err := svc.Add(ctx, acct.ID, "Someone <Someone@Example.net>")
	if err != nil {
		t.Fatal(err)
	}
	if !created || sup.Address != "someone@example.net" || sup.Reason != mailroom.SuppressedManual ||
		!sup.CreatedAt.Equal(now.Truncate(time.Microsecond)) {
		t.Fatalf("first add: created %v, %+v", created, sup)
	}
	first := sup.CreatedAt

	sup, created, err = svc.Add(ctx, acct.ID, "someone@example.NET")
	if err != nil {
		t.Fatal(err)
	}
	if created || !sup.CreatedAt.Equal(first) {
		t.Fatalf("adding again: created %v, %+v (first at %v)", created, sup, first)
	}

	// A hard bounce suppressed this one before the client added it by hand.
	bounced := &mailroom.Suppression{AccountID: acct.ID, Address: "gone@example.net", Reason: mailroom.SuppressedHardBounce,
		MessageID: "msg_1", CreatedAt: time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)}
	if _, err := store.AddSuppression(ctx, bounced); err != nil {
		t.Fatal(err)
	}
	sup, created, err = svc.Add(ctx, acct.ID, "gone@example.net")
	if err != nil {
		t.Fatal(err)
	}
	if created || sup.Reason != mailroom.SuppressedHardBounce || sup.MessageID != "msg_1" || !sup.CreatedAt.Equal(bounced.CreatedAt) {
		t.Fatalf("manual add over a hard bounce: created %v, %+v", created, sup)
	}

	// An entry another account holds does not count for this one.
	other := storetest.NewAccount(t, store, "globex")
	if _, created, err := svc.Add(ctx, other.ID, "someone@example.net"); err != nil || !created {
		t.Fatalf("another account's add: created %v, %v", created, err)
	}

	_, _, err = svc.Add(ctx, acct.ID, "not an address")
	var e *mailroom.Error
	if mailroom.ErrorCode(err) != mailroom.ECodeValidation || !errors.As(err, &e) || len(e.Details) != 1 || e.Details[0].Field != "address" {
		t.Fatalf("a bad address: %v", err)
	}
	// The service's advice comes whole, not cut as a quoted value would be.
	_, _, err = svc.Add(ctx, acct.ID, "Ann (sales) <ann@example.com>")
	if !errors.As(err, &e) || len(e.Details) != 1 || !strings.HasSuffix(e.Details[0].Message, `("John <john@example.com>")`) {
		t.Fatalf("an address with a comment: %v", err)
	}

	// Get, List and Delete reach the same list.
	if got, err := svc.Get(ctx, acct.ID, "SOMEONE@example.net"); err != nil || !got.CreatedAt.Equal(first) {
		t.Fatalf("get: %+v %v", got, err)
	}
	if list, _, err := svc.List(ctx, acct.ID, mailroom.Page{}); err != nil || len(list) != 2 {
		t.Fatalf("list: %d entries, %v", len(list), err)
	}
	if err := svc.Delete(ctx, acct.ID, "someone@example.net"); err != nil {
		t.Fatal(err)
	}
	if _, err := svc.Get(ctx, acct.ID, "someone@example.net"); !mailroom.IsCode(err, mailroom.ECodeNotFound) {
		t.Fatalf("get after delete: %v", err)
	}
	// Deleted, the address can be added anew.
	if _, created, err := svc.Add(ctx, acct.ID, "someone@example.net"); err != nil || !created {
		t.Fatalf("add after delete: created %v, %v", created, err)
	}
}
