package storetest

import (
	"context"
	"slices"
	"testing"

	"github.com/mailroom/mailroom"
)

func init() {
	extraSuites = append(extraSuites, suite{"SimulatedSuppressed", testSimulatedSuppressed})
}

// testSimulatedSuppressed: a message to suppressed@simulator.invalid (with
// a +label) is accepted as a send to a listed address is: the recipient
// suppressed with its email.suppressed event, never claimed, while the
// account's suppression list stays empty (docs/api.md "Test addresses").
func testSimulatedSuppressed(t *testing.T, s mailroom.Store) {
	ctx := context.Background()
	acct := NewAccount(t, s, "acme")
	const addr = "suppressed+signup@simulator.invalid"
	m := NewMessage(acct, t0, addr, "delivered@simulator.invalid")
	res := Try(s.AcceptMessage(ctx, m)).Must(t)
	if res.Status != mailroom.MessageQueued {
		t.Fatalf("accept: %+v, want queued (one recipient is delivered@)", res)
	}
	got, events, err := s.Message(ctx, acct.ID, m.ID)
	if err != nil {
		t.Fatal(err)
	}
	var statuses []string
	for _, r := range got.Recipients {
		statuses = append(statuses, r.Address+":"+string(r.Status))
	}
	if want := []string{addr + ":suppressed", "delivered@simulator.invalid:queued"}; !slices.Equal(statuses, want) {
		t.Errorf("recipients %v, want %v", statuses, want)
	}
	if types := eventTypes(events); !slices.Contains(types, mailroom.EventEmailSuppressed) {
		t.Errorf("events %v, want an email.suppressed", types)
	}
	for _, q := range Try(claim(s, "node_a", t0, 100)).Must(t) {
		if q.Address == addr {
			t.Error("a suppressed test address was claimed")
		}
	}
	if list, _, err := s.ListSuppressions(ctx, acct.ID, mailroom.Page{Limit: 100}); err != nil || len(list) != 0 {
		t.Errorf("suppression list: %v %+v", err, list)
	}

	// Alone, the message is suppressed, as one to a listed address.
	res = Try(s.AcceptMessage(ctx, NewMessage(acct, t0, "Suppressed@simulator.invalid"))).Must(t)
	if res.Status != mailroom.MessageSuppressed {
		t.Errorf("accept to suppressed@ alone: %+v", res)
	}
}
