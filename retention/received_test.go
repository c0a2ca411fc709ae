package retention_test

import (
	"context"
	"log/slog"
	"testing"
	"time"

	"github.com/mailroom/mailroom"
	"github.com/mailroom/mailroom/retention"
	"github.com/mailroom/mailroom/storetest"
)

// Received mail is kept for --retention as sent mail is (docs/api.md
// "Receiving mail"): past it the message, its attachments and its
// email.received event are gone; younger mail stays. Both engines.
func TestSweeperRemovesReceivedMailPastRetention(t *testing.T) {
	storetest.Each(t, func(t *testing.T, e storetest.Engine) {
		s := e.Open(t)
		ctx := context.Background()
		acct := storetest.NewAccount(t, s, "acme")
		now := time.Now()
		period := 30 * 24 * time.Hour
		old, oldEvent := storetest.NewReceived(t, acct, "a@in.example.com", now.Add(-period-time.Hour))
		young, youngEvent := storetest.NewReceived(t, acct, "b@in.example.com", now.Add(-period+time.Hour))
		for _, x := range []struct {
			m *mailroom.ReceivedMessage
			e *mailroom.Event
		}{{old, oldEvent}, {young, youngEvent}} {
			if err := s.SaveReceived(ctx, []*mailroom.ReceivedMessage{x.m}, []*mailroom.Event{x.e}); err != nil {
				t.Fatal(err)
			}
		}
		r := &retention.Sweeper{Store: s, Webhooks: s, Received: s, Period: period,
			Now: func() time.Time { return now }, Log: slog.New(slog.DiscardHandler)}
		if _, err := r.RunOnce(ctx); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Received(ctx, acct.ID, old.ID); !mailroom.IsCode(err, mailroom.ECodeNotFound) {
			t.Fatalf("mail received past the retention is still there (%v)", err)
		}
		if _, err := s.ReceivedAttachment(ctx, acct.ID, old.ID, old.Attachments[0].ID); !mailroom.IsCode(err, mailroom.ECodeNotFound) {
			t.Fatalf("its attachment is still there (%v)", err)
		}
		if _, err := s.Event(ctx, acct.ID, oldEvent.ID); !mailroom.IsCode(err, mailroom.ECodeNotFound) {
			t.Fatalf("its email.received event is still there (%v)", err)
		}
		if _, err := s.Received(ctx, acct.ID, young.ID); err != nil {
			t.Fatalf("mail within the retention is gone: %v", err)
		}
		if _, err := s.Event(ctx, acct.ID, youngEvent.ID); err != nil {
			t.Fatalf("its event is gone: %v", err)
		}
	})
}
