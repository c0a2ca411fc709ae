package storetest_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/mailroom/mailroom"
	"github.com/mailroom/mailroom/storetest"
)

// TestEngagementEventDataBytes pins what the rows of email.opened and
// email.clicked keep (the detail alone, as every email event's row, with
// the engagement's url, userAgent, ip and machine) and what each reader
// gives back: the event list, one event, the message's timeline and the
// webhook outbox, byte for byte. (Events of the other types stay as
// TestEmailEventDataBytes pins them.)
func TestEngagementEventDataBytes(t *testing.T) {
	storetest.Each(t, func(t *testing.T, e storetest.Engine) {
		ctx := context.Background()
		s, db := openWithSQL(t, e.Name)
		acct := storetest.NewAccount(t, s, "acme")
		hook := &mailroom.WebhookEndpoint{ID: mailroom.NewID(mailroom.PrefixWebhook, time.Now()), AccountID: acct.ID,
			URL: "https://hooks.example/h", Events: []string{mailroom.EventEmailOpened, mailroom.EventEmailClicked}, Enabled: true,
			SecretSealed: []byte("s"), CreatedAt: time.Now()}
		if err := s.CreateWebhook(ctx, hook, mailroom.DefaultMaxWebhooks); err != nil {
			t.Fatal(err)
		}
		at := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
		m := storetest.NewMessage(acct, at, "a@x.example")
		m.Subject = `Zoë's "offer" <b>`
		m.HTML, m.Tracking = `<a href="https://shop.example/">x</a>`, mailroom.Tracking{Opens: true, Clicks: true}
		storetest.Try(s.AcceptMessage(ctx, m)).Must(t)
		url := "https://shop.example/zoë?a=1&b=<2>#top"
		if err := s.SaveTrackedLinks(ctx, m.ID, []string{url}); err != nil {
			t.Fatal(err)
		}
		// Delivered at at, as stored by delivery.
		claimed := storetest.Try(s.ClaimDueRecipients(ctx, mailroom.Claim{Node: "node_a", Now: at, Lease: time.Minute, Limit: 10})).Must(t)
		r := claimed[0].Recipient
		r.Status, r.Attempts, r.LastAttemptAt, r.SMTPCode, r.SMTPResponse = mailroom.RecipientDelivered, 1, &at, 250, "250 ok"
		if err := s.RecordAttempts(ctx, []*mailroom.Attempt{{Recipient: &r, Message: claimed[0].Message, ClaimToken: claimed[0].ClaimToken,
			Event: mailroom.NewEmailEvent(claimed[0].Message, &r, mailroom.EventEmailDelivered, at)}}); err != nil {
			t.Fatal(err)
		}
		ua := `Mozilla/5.0 (Macintosh) "Safari" <x> & é`
		open := storetest.Try(s.RecordEngagement(ctx, &mailroom.EngagementHit{Type: mailroom.EventEmailOpened, MessageID: m.ID,
			Recipient: "a@x.example", UserAgent: ua, IP: "192.0.2.0", Machine: true, At: at.Add(time.Hour)})).Must(t)
		click := storetest.Try(s.RecordEngagement(ctx, &mailroom.EngagementHit{Type: mailroom.EventEmailClicked, MessageID: m.ID,
			Recipient: "a@x.example", LinkIndex: 0, URL: url, UserAgent: ua, IP: "2001:db8:1::", At: at.Add(2 * time.Hour)})).Must(t)
		// A user agent not valid UTF-8 (the tracking service cuts it to
		// valid UTF-8; were one to come) keeps the data whole, as the
		// API shows it, so that every reader gives back what was made.
		odd := storetest.Try(s.RecordEngagement(ctx, &mailroom.EngagementHit{Type: mailroom.EventEmailClicked, MessageID: m.ID,
			Recipient: "a@x.example", URL: url, UserAgent: "odd \xff agent", IP: "192.0.2.0", At: at.Add(3 * time.Hour)})).Must(t)

		uaJSON := `"userAgent":"Mozilla/5.0 (Macintosh) \"Safari\" \u003cx\u003e \u0026 é"`
		urlJSON := `"url":"https://shop.example/zoë?a=1\u0026b=\u003c2\u003e#top"`
		head := `{"messageId":"MSG","recipient":"a@x.example","from":"orders@shop.example","subject":"Zoë's \"offer\" \u003cb\u003e","tags":{"kind":"receipt"},`
		want := map[string]struct{ stored, read string }{
			open.ID: {`{"attempt":1,` + uaJSON + `,"ip":"192.0.2.0","machine":true}`,
				head + `"attempt":1,` + uaJSON + `,"ip":"192.0.2.0","machine":true}`},
			click.ID: {`{"attempt":1,` + urlJSON + `,` + uaJSON + `,"ip":"2001:db8:1::","machine":false}`,
				head + `"attempt":1,` + urlJSON + `,` + uaJSON + `,"ip":"2001:db8:1::","machine":false}`},
			odd.ID: {"", head + `"attempt":1,` + urlJSON + `,"userAgent":"odd \ufffd agent","ip":"192.0.2.0","machine":false}`},
		}
		want[odd.ID] = struct{ stored, read string }{strings.ReplaceAll(want[odd.ID].read, "MSG", m.ID), want[odd.ID].read}
		ids := strings.NewReplacer("MSG", m.ID)
		rows, err := db.QueryContext(ctx, `SELECT type, data FROM events WHERE type IN ('email.opened', 'email.clicked')`)
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for rows.Next() {
			var typ, data string
			if err := rows.Scan(&typ, &data); err != nil {
				t.Fatal(err)
			}
			n++
			id := open.ID
			if typ == mailroom.EventEmailClicked {
				id = click.ID
				if strings.Contains(data, "odd") {
					id = odd.ID
				}
			}
			if data != want[id].stored {
				t.Errorf("%s stored:\n got  %s\n want %s", typ, data, want[id].stored)
			}
		}
		if err := rows.Err(); err != nil {
			t.Fatal(err)
		}
		rows.Close()
		if n != 3 {
			t.Fatalf("%d engagement rows, want 3", n)
		}

		readers := map[string][]*mailroom.Event{}
		readers["list"], _ = storetest.Try2(s.ListEvents(ctx, acct.ID, mailroom.EventFilter{}, mailroom.Page{Limit: 100})).Must(t)
		for _, id := range []string{open.ID, click.ID, odd.ID} {
			readers["event"] = append(readers["event"], storetest.Try(s.Event(ctx, acct.ID, id)).Must(t))
		}
		_, readers["timeline"], err = s.Message(ctx, acct.ID, m.ID)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range storetest.Try(s.ClaimWebhookDeliveries(ctx, mailroom.WebhookClaim{Node: "node_a", Now: time.Now().Add(time.Hour),
			Lease: time.Minute, Limit: 100})).Must(t) {
			readers["outbox"] = append(readers["outbox"], d.Event)
		}
		// As made: the event RecordEngagement returns marshals alike.
		readers["returned"] = []*mailroom.Event{
			{ID: open.ID, Type: open.Type, Data: open.Email.JSON()}, {ID: click.ID, Type: click.Type, Data: click.Email.JSON()},
			{ID: odd.ID, Type: odd.Type, Data: odd.Email.JSON()}}
		for name, events := range readers {
			found := 0
			for _, x := range events {
				w, ok := want[x.ID]
				if !ok {
					continue
				}
				found++
				if string(x.Data) != ids.Replace(w.read) {
					t.Errorf("%s: %s read:\n got  %s\n want %s", name, x.Type, x.Data, ids.Replace(w.read))
				}
			}
			if found != 3 {
				t.Errorf("%s has %d of the three engagement events", name, found)
			}
		}
	})
}

// TestRetentionRemovesTrackedLinks: the links of a message retention
// removes go with it, those of a message kept stay.
func TestRetentionRemovesTrackedLinks(t *testing.T) {
	storetest.Each(t, func(t *testing.T, e storetest.Engine) {
		ctx := context.Background()
		s, db := openWithSQL(t, e.Name)
		acct := storetest.NewAccount(t, s, "acme")
		at := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
		old, kept := storetest.NewMessage(acct, at, "a@x.example"), storetest.NewMessage(acct, at.Add(2*time.Hour), "a@x.example")
		for _, m := range []*mailroom.Message{old, kept} {
			m.HTML, m.Tracking = `<a href="https://shop.example/">x</a>`, mailroom.Tracking{Clicks: true}
			storetest.Try(s.AcceptMessage(ctx, m)).Must(t)
			if err := s.SaveTrackedLinks(ctx, m.ID, []string{"https://shop.example/1", "https://shop.example/2"}); err != nil {
				t.Fatal(err)
			}
		}
		claimed := storetest.Try(s.ClaimDueRecipients(ctx, mailroom.Claim{Node: "node_a", Now: at.Add(3 * time.Hour), Lease: time.Minute, Limit: 10})).Must(t)
		var attempts []*mailroom.Attempt
		for _, q := range claimed {
			r := q.Recipient
			r.Status = mailroom.RecipientDelivered
			attempts = append(attempts, &mailroom.Attempt{Recipient: &r, Message: q.Message, ClaimToken: q.ClaimToken})
		}
		if err := s.RecordAttempts(ctx, attempts); err != nil {
			t.Fatal(err)
		}
		count := func() int {
			var n int
			if err := db.QueryRowContext(ctx, `SELECT count(*) FROM message_links`).Scan(&n); err != nil {
				t.Fatal(err)
			}
			return n
		}
		if n := count(); n != 4 {
			t.Fatalf("%d links stored, want 4", n)
		}
		if n := storetest.Try(s.DeleteExpiredMessages(ctx, at.Add(time.Hour), 100)).Must(t); n != 1 {
			t.Fatalf("retention removed %d messages, want 1", n)
		}
		if n := count(); n != 2 {
			t.Errorf("%d links left, want the 2 of the message kept", n)
		}
	})
}
