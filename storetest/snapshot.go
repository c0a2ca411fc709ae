package storetest

import (
	"context"
	"testing"

	"github.com/mailroom/mailroom"
)

func init() {
	extraSuites = append(extraSuites, suite{"MessageReadIsOneSnapshot", testMessageSnapshot})
}

// testMessageSnapshot: a message read while its outcomes are recorded
// shows one state: its status is the one its recipients' states give, and
// its timeline holds an email.delivered event for each delivered
// recipient, never a mix of before and after.
func testMessageSnapshot(t *testing.T, s mailroom.Store) {
	ctx := context.Background()
	acct := NewAccount(t, s, "acme")
	const rounds = 60
	for i := range rounds {
		m := NewMessage(acct, t0, "a@x.example", "b@y.example", "c@z.example")
		if _, err := s.AcceptMessage(ctx, m); err != nil {
			t.Fatal(err)
		}
		claimed := Try(claim(s, "node_a", t0, 10)).Must(t)
		done := make(chan error, 1)
		go func() {
			var attempts []*mailroom.Attempt
			for _, q := range claimed {
				r := q.Recipient
				r.Status, r.Attempts = mailroom.RecipientDelivered, 1
				attempts = append(attempts, &mailroom.Attempt{Recipient: &r, Message: q.Message, ClaimToken: q.ClaimToken,
					Event: mailroom.NewEmailEvent(q.Message, &r, mailroom.EventEmailDelivered, t0)})
			}
			done <- s.RecordAttempts(ctx, attempts)
		}()
		for finished := false; !finished; {
			select {
			case err := <-done:
				if err != nil {
					t.Fatal(err)
				}
				finished = true
			default:
			}
			got, events, err := s.Message(ctx, acct.ID, m.ID)
			if err != nil {
				t.Fatal(err)
			}
			var states []mailroom.RecipientStatus
			delivered := 0
			for _, r := range got.Recipients {
				states = append(states, r.Status)
				if r.Status == mailroom.RecipientDelivered {
					delivered++
				}
			}
			if want := mailroom.DeriveMessageStatus(states); got.Status != want {
				t.Fatalf("round %d: status %s beside recipients %v", i, got.Status, states)
			}
			if n := len(eventsOfType(events, mailroom.EventEmailDelivered)); n != delivered {
				t.Fatalf("round %d: %d email.delivered events beside %d delivered recipients", i, n, delivered)
			}
		}
	}
}

func eventsOfType(events []*mailroom.Event, typ string) []*mailroom.Event {
	var out []*mailroom.Event
	for _, e := range events {
		if e.Type == typ {
			out = append(out, e)
		}
	}
	return out
}
