package storetest_test

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/mailroom/mailroom"
	"github.com/mailroom/mailroom/storetest"
)

// TestEmailEventDataStoredLean: an email event's row keeps what the event
// alone tells, not its message's id, its recipient, nor the message's
// from, subject and tags (the message holds them); and every reader puts
// them back, so that what the API and webhooks show is, byte for byte,
// the data the event was made with: the events list, one event, a
// message's timeline and a webhook claim. The events come from every path
// that writes them: an accept of a batch and of one message (queued,
// suppressed, scheduled), delivery (delivered, deferred, bounced), a report
// (complained) and a cancel. A row written before, whole, reads back as it
// was stored, even where its message now says otherwise.
func TestEmailEventDataStoredLean(t *testing.T) {
	storetest.Each(t, func(t *testing.T, e storetest.Engine) {
		ctx := context.Background()
		s, db := openWithSQL(t, e.Name)
		acct := storetest.NewAccount(t, s, "acme")
		at := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
		hook := &mailroom.WebhookEndpoint{ID: mailroom.NewID(mailroom.PrefixWebhook, at), AccountID: acct.ID,
			URL: "https://hooks.example/all", Events: []string{mailroom.AllEventTypes}, Enabled: true,
			SecretSealed: []byte("sealed"), CreatedAt: at, UpdatedAt: at}
		if err := s.CreateWebhook(ctx, hook, mailroom.DefaultMaxWebhooks); err != nil {
			t.Fatal(err)
		}
		if _, err := s.AddSuppression(ctx, &mailroom.Suppression{AccountID: acct.ID, Address: "s@y.example",
			Reason: mailroom.SuppressedManual, CreatedAt: at}); err != nil {
			t.Fatal(err)
		}

		// want is each event's data, by type and recipient, as its maker
		// made it.
		want := map[string]string{}
		made := func(typ string, m *mailroom.Message, r *mailroom.Recipient, now time.Time) {
			want[typ+" "+r.Address] = string(mailroom.NewEmailEvent(m.Summary(), r, typ, now).Email.JSON())
		}
		// Subjects and tags that JSON escapes, and a message with no tags
		// ("tags": {}).
		tagged := storetest.NewMessage(acct, at, "a@x.example", "b@x.example", "s@y.example")
		tagged.Subject = `Your "receipt" <b>&</b> for Zoë`
		tagged.Tags = map[string]string{"kind": "receipt", "note": `<i>"x"</i> & é`}
		bare := storetest.NewMessage(acct, at.Add(time.Millisecond), "c@y.example")
		bare.Tags = nil
		later := at.Add(24 * time.Hour)
		scheduled := storetest.NewMessage(acct, at.Add(2*time.Millisecond), "d@z.example")
		scheduled.ScheduledAt = &later
		for _, r := range tagged.Recipients[:2] {
			made(mailroom.EventEmailQueued, tagged, r, tagged.CreatedAt)
		}
		made(mailroom.EventEmailSuppressed, tagged, tagged.Recipients[2], tagged.CreatedAt)
		made(mailroom.EventEmailQueued, bare, bare.Recipients[0], bare.CreatedAt)
		made(mailroom.EventEmailScheduled, scheduled, scheduled.Recipients[0], scheduled.CreatedAt)
		if _, err := s.AcceptMessages(ctx, []*mailroom.Message{tagged, bare}); err != nil {
			t.Fatal(err)
		}
		if _, err := s.AcceptMessage(ctx, scheduled); err != nil {
			t.Fatal(err)
		}

		// Delivery: a's delivered in clear text, b's deferred, c's bounced.
		now := at.Add(time.Minute)
		claimed := storetest.Try(s.ClaimDueRecipients(ctx, mailroom.Claim{Node: "node_a", Now: now, Lease: time.Minute, Limit: 10})).Must(t)
		if len(claimed) != 3 {
			t.Fatalf("%d recipients claimed, want a, b and c", len(claimed))
		}
		var attempts []*mailroom.Attempt
		for _, q := range claimed {
			r := q.Recipient
			r.Attempts, r.LastAttemptAt = 1, &now
			typ := map[string]string{"a@x.example": mailroom.EventEmailDelivered, "b@x.example": mailroom.EventEmailDeferred,
				"c@y.example": mailroom.EventEmailBounced}[r.Address]
			switch typ {
			case mailroom.EventEmailDelivered:
				r.Status, r.SMTPCode, r.SMTPResponse, r.MX, r.Unencrypted = mailroom.RecipientDelivered, 250, "250 2.0.0 Ok: queued as 4F2A", "mx.x.example", true
				r.Site = "mx.x.example"
			case mailroom.EventEmailDeferred:
				next := now.Add(time.Hour)
				r.Status, r.SMTPCode, r.SMTPResponse, r.NextAttemptAt = mailroom.RecipientDeferred, 451, "451 4.7.1 \"later\" <please>", &next
				r.Site, r.LastDeferralReason = "google", mailroom.DeferGreylisted
			default:
				r.Status, r.SMTPCode, r.SMTPResponse = mailroom.RecipientBounced, 550, "550 5.1.1 no such user"
			}
			ev := mailroom.NewEmailEvent(q.Message, &r, typ, now)
			want[typ+" "+r.Address] = string(ev.Email.JSON())
			attempts = append(attempts, &mailroom.Attempt{Recipient: &r, Message: q.Message, ClaimToken: q.ClaimToken, Event: ev})
		}
		if err := s.RecordAttempts(ctx, attempts); err != nil {
			t.Fatal(err)
		}

		// A complaint for a, as reports.go makes it: async, with the
		// reporter's text.
		rcptA := *tagged.Recipients[0]
		rcptA.Attempts = 1
		complaint := mailroom.NewEmailEvent(tagged.Summary(), &rcptA, mailroom.EventEmailComplained, now.Add(time.Second))
		complaint.Email.EmailEventDetail = mailroom.EmailEventDetail{Async: true, ReportText: "This message is spam <really>", Attempt: 1}
		want[mailroom.EventEmailComplained+" "+rcptA.Address] = string(mustMarshal(t, mailroom.EmailEventData{MessageID: tagged.ID,
			Recipient: rcptA.Address, From: tagged.From.Address, Subject: tagged.Subject, Tags: tagged.Tags,
			EmailEventDetail: mailroom.EmailEventDetail{Async: true, ReportText: "This message is spam <really>", Attempt: 1}}))
		if err := s.RecordReport(ctx, &mailroom.ReportOutcome{MessageID: tagged.ID, Address: rcptA.Address,
			Status: mailroom.RecipientComplained, Event: complaint}); err != nil {
			t.Fatal(err)
		}

		// The scheduled message canceled.
		if err := s.CancelMessage(ctx, acct.ID, scheduled.ID, now.Add(2*time.Second)); err != nil {
			t.Fatal(err)
		}
		made(mailroom.EventEmailCanceled, scheduled, scheduled.Recipients[0], now.Add(2*time.Second))

		// Each row as stored: none of the five, and all the rest.
		rows, err := db.QueryContext(ctx, `SELECT type, recipient, data FROM events`)
		if err != nil {
			t.Fatal(err)
		}
		stored := 0
		for rows.Next() {
			var typ, rcpt, data string
			if err := rows.Scan(&typ, &rcpt, &data); err != nil {
				t.Fatal(err)
			}
			stored++
			var fields map[string]json.RawMessage
			if err := json.Unmarshal([]byte(data), &fields); err != nil {
				t.Fatalf("%s %s: stored data %s: %v", typ, rcpt, data, err)
			}
			for _, k := range []string{"messageId", "recipient", "from", "subject", "tags"} {
				if _, ok := fields[k]; ok {
					t.Errorf("%s %s: the stored data holds %q: %s", typ, rcpt, k, data)
				}
			}
			var full map[string]json.RawMessage
			if err := json.Unmarshal([]byte(want[typ+" "+rcpt]), &full); err != nil {
				t.Fatalf("%s %s: no data made", typ, rcpt)
			}
			for k, v := range full {
				if _, ok := fields[k]; !ok && !isMessageField(k) {
					t.Errorf("%s %s: the stored data lacks %s (%s): %s", typ, rcpt, k, v, data)
				}
			}
		}
		if err := rows.Err(); err != nil {
			t.Fatal(err)
		}
		rows.Close()
		if stored != len(want) {
			t.Fatalf("%d events stored, want %d", stored, len(want))
		}

		// A row written before, whole: its data read back as it is stored,
		// though its message has another subject and tags.
		old := &mailroom.Event{ID: mailroom.NewID(mailroom.PrefixEvent, now.Add(3*time.Second)), AccountID: acct.ID,
			Type: mailroom.EventEmailDelivered, CreatedAt: now.Add(3 * time.Second), MessageID: bare.ID, Recipient: "c@y.example",
			Data: mustMarshal(t, mailroom.EmailEventData{MessageID: bare.ID, Recipient: "c@y.example", From: "before@shop.example",
				Subject: "Stored whole", Tags: map[string]string{"old": "yes"},
				EmailEventDetail: mailroom.EmailEventDetail{SMTPCode: 250, SMTPResponse: "250 ok", Attempt: 2}})}
		if _, err := db.ExecContext(ctx, `INSERT INTO events (account_id, id, type, created_at, message_id, recipient, data)
			VALUES ($1, $2, $3, $4, $5, $6, $7)`, storedAccountKey(t, db, acct.ID), storedKey(t, old.ID), old.Type, old.CreatedAt.UnixMicro(),
			storedKey(t, old.MessageID), old.Recipient, string(old.Data)); err != nil {
			t.Fatal(err)
		}
		if err := s.AddWebhookDeliveries(ctx, acct.ID, old.ID, []string{hook.ID}, old.CreatedAt); err != nil {
			t.Fatal(err)
		}
		oldKey := old.Type + " " + old.Recipient + " (stored whole)"
		want[oldKey] = string(old.Data)
		key := func(x *mailroom.Event) string {
			if x.ID == old.ID {
				return oldKey
			}
			return x.Type + " " + x.Recipient
		}
		check := func(how string, got []*mailroom.Event) {
			t.Helper()
			seen := map[string]bool{}
			for _, x := range got {
				k := key(x)
				seen[k] = true
				if w, ok := want[k]; !ok || string(x.Data) != w {
					t.Errorf("%s, %s:\n got  %s\n want %s", how, k, x.Data, w)
				}
			}
			if len(seen) != len(want) || len(got) != len(want) {
				t.Errorf("%s: %d events, %d distinct, want %d", how, len(got), len(seen), len(want))
			}
		}

		// The events list, two a page; then each event alone.
		var listed []*mailroom.Event
		cursor := ""
		for {
			page, next := storetest.Try2(s.ListEvents(ctx, acct.ID, mailroom.EventFilter{}, mailroom.Page{Limit: 2, Cursor: cursor})).Must(t)
			listed = append(listed, page...)
			if cursor = next; next == "" {
				break
			}
		}
		check("the events list", listed)
		for i := 1; i < len(listed); i++ {
			if listed[i].ID >= listed[i-1].ID {
				t.Errorf("the events list is not newest first: %s after %s", listed[i].ID, listed[i-1].ID)
			}
		}
		var one []*mailroom.Event
		for _, x := range listed {
			one = append(one, storetest.Try(s.Event(ctx, acct.ID, x.ID)).Must(t))
		}
		check("Event", one)
		// The list by type and by message, which take other indexes.
		byType, _ := storetest.Try2(s.ListEvents(ctx, acct.ID, mailroom.EventFilter{Type: mailroom.EventEmailQueued}, mailroom.Page{})).Must(t)
		byMessage, _ := storetest.Try2(s.ListEvents(ctx, acct.ID, mailroom.EventFilter{MessageID: bare.ID}, mailroom.Page{})).Must(t)
		for _, x := range append(byType, byMessage...) {
			if string(x.Data) != want[key(x)] {
				t.Errorf("the events list filtered, %s:\n got  %s\n want %s", key(x), x.Data, want[key(x)])
			}
		}
		if len(byType) != 3 || len(byMessage) != 3 {
			t.Errorf("%d queued events, want 3; %d of the bare message, want 3", len(byType), len(byMessage))
		}

		// Each message's timeline.
		var timelines []*mailroom.Event
		for _, m := range []*mailroom.Message{tagged, bare, scheduled} {
			_, events, err := s.Message(ctx, acct.ID, m.ID)
			if err != nil {
				t.Fatal(err)
			}
			timelines = append(timelines, events...)
		}
		check("the timelines", timelines)

		// A webhook claim: each event's delivery carries it whole.
		deliveries := storetest.Try(s.ClaimWebhookDeliveries(ctx, mailroom.WebhookClaim{Node: "node_a", Now: now.Add(time.Hour),
			Lease: time.Minute, Limit: 100, PerEndpoint: 100})).Must(t)
		var delivered []*mailroom.Event
		for _, d := range deliveries {
			delivered = append(delivered, d.Event)
		}
		check("the webhook claim", delivered)
	})
}

func isMessageField(k string) bool {
	switch k {
	case "messageId", "recipient", "from", "subject", "tags":
		return true
	}
	return false
}

func mustMarshal(t *testing.T, v any) json.RawMessage {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(fmt.Sprint(err))
	}
	return b
}

// TestEmailEventSiteNotUTF8: a deferral whose site, named by MX hosts, is
// not valid UTF-8 (SQLite keeps such a string in the recipient's row;
// PostgreSQL refuses it) is kept whole, and read back as its data
// marshals, not with the bad byte made into a character.
func TestEmailEventSiteNotUTF8(t *testing.T) {
	ctx := context.Background()
	s := storetest.SQLite.Open(t)
	acct := storetest.NewAccount(t, s, "acme")
	at := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	storetest.Try(s.AcceptMessage(ctx, storetest.NewMessage(acct, at, "a@x.example"))).Must(t)
	claimed := storetest.Try(s.ClaimDueRecipients(ctx, mailroom.Claim{Node: "node_a", Now: at, Lease: time.Minute, Limit: 10})).Must(t)
	if len(claimed) != 1 {
		t.Fatalf("%d recipients claimed, want 1", len(claimed))
	}
	q := claimed[0]
	next := at.Add(time.Hour)
	r := q.Recipient
	r.Status, r.Attempts, r.LastAttemptAt, r.NextAttemptAt = mailroom.RecipientDeferred, 1, &at, &next
	r.SMTPCode, r.SMTPResponse, r.Site, r.LastDeferralReason = 451, "451 4.3.0 later", "mx.x.example,mx\xff.x.example", mailroom.DeferTemporary
	ev := mailroom.NewEmailEvent(q.Message, &r, mailroom.EventEmailDeferred, at)
	if err := s.RecordAttempts(ctx, []*mailroom.Attempt{{Recipient: &r, Message: q.Message, ClaimToken: q.ClaimToken, DueAt: &next, Event: ev}}); err != nil {
		t.Fatal(err)
	}
	got := storetest.Try(s.Event(ctx, acct.ID, ev.ID)).Must(t)
	if want := string(ev.Email.JSON()); string(got.Data) != want {
		t.Fatalf("the deferral reads back as\n  %s\nwant\n  %s", got.Data, want)
	}
}
