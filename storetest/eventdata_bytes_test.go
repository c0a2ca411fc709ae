package storetest_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/mailroom/mailroom"
	"github.com/mailroom/mailroom/storetest"
)

// TestEmailEventDataBytes pins, byte for byte, what an email event's row
// keeps and what a reader gives back, for events of each kind of maker:
// an accept (a message whose subject and tags JSON escapes, and one with
// no tags), delivery (delivered in clear text, a hard bounce, a deferral
// whose reply, on SQLite, is not valid UTF-8, kept whole) and a report (a
// complaint).
// The literals are what the store wrote and read before event data was
// made typed (issue 26), so a store of either version reads the other's
// rows as it wrote them; "MSG" and "BARE" stand for the messages' ids.
func TestEmailEventDataBytes(t *testing.T) {
	storetest.Each(t, func(t *testing.T, e storetest.Engine) {
		ctx := context.Background()
		s, db := openWithSQL(t, e.Name)
		acct := storetest.NewAccount(t, s, "acme")
		at := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
		tagged := storetest.NewMessage(acct, at, "a@x.example", "b@x.example", "c@x.example")
		tagged.Subject = "Your \"receipt\" <b>&</b> for Zoë\u2028"
		tagged.Tags = map[string]string{"kind": "receipt", "note": `<i>"x"</i> & é`}
		bare := storetest.NewMessage(acct, at.Add(time.Millisecond), "d@y.example")
		bare.Tags = nil
		if _, err := s.AcceptMessages(ctx, []*mailroom.Message{tagged, bare}); err != nil {
			t.Fatal(err)
		}

		// The deferral's reply is not valid UTF-8 where the engine keeps
		// such a string (PostgreSQL refuses it in the recipient's row).
		deferral, deferralJSON := "451 4.3.0 try \xff later", `"smtpResponse":"451 4.3.0 try \ufffd later"`
		if e.Name == "postgres" {
			deferral, deferralJSON = "451 4.3.0 try later", `"smtpResponse":"451 4.3.0 try later"`
		}
		now := at.Add(time.Minute)
		claimed := storetest.Try(s.ClaimDueRecipients(ctx, mailroom.Claim{Node: "node_a", Now: now, Lease: time.Minute, Limit: 10})).Must(t)
		var attempts []*mailroom.Attempt
		for _, q := range claimed {
			r := q.Recipient
			r.Attempts, r.LastAttemptAt = 1, &now
			var typ string
			switch r.Address {
			case "a@x.example":
				typ = mailroom.EventEmailDelivered
				r.Status, r.SMTPCode, r.SMTPResponse, r.MX, r.Unencrypted = mailroom.RecipientDelivered, 250, `250 2.0.0 <ok> & "queued"`, "mx.x.example", true
			case "b@x.example":
				typ = mailroom.EventEmailBounced
				r.Status, r.SMTPCode, r.SMTPResponse = mailroom.RecipientBounced, 550, "550 5.1.1 no such user"
			case "c@x.example":
				typ = mailroom.EventEmailDeferred
				next := now.Add(time.Hour)
				r.Status, r.SMTPCode, r.SMTPResponse, r.NextAttemptAt = mailroom.RecipientDeferred, 451, deferral, &next
			default:
				continue
			}
			attempts = append(attempts, &mailroom.Attempt{Recipient: &r, Message: q.Message, ClaimToken: q.ClaimToken,
				Event: mailroom.NewEmailEvent(q.Message, &r, typ, now)})
		}
		if len(attempts) != 3 {
			t.Fatalf("%d attempts, want a's, b's and c's", len(attempts))
		}
		if err := s.RecordAttempts(ctx, attempts); err != nil {
			t.Fatal(err)
		}
		rcpt := *tagged.Recipients[0]
		rcpt.Attempts = 1
		if err := s.RecordReport(ctx, &mailroom.ReportOutcome{MessageID: tagged.ID, Address: rcpt.Address,
			Status: mailroom.RecipientComplained, Event: complaintEvent(tagged.Summary(), &rcpt, now.Add(time.Second))}); err != nil {
			t.Fatal(err)
		}

		// Each event's row as stored, and its data as the events list
		// gives it back.
		subject, tags := `"subject":"Your \"receipt\" \u003cb\u003e\u0026\u003c/b\u003e for Zoë\u2028"`,
			`"tags":{"kind":"receipt","note":"\u003ci\u003e\"x\"\u003c/i\u003e \u0026 é"}`
		head := func(id, rcpt string) string {
			return `{"messageId":"` + id + `","recipient":"` + rcpt + `","from":"orders@shop.example",`
		}
		want := map[string]struct{ stored, read string }{
			"email.queued a@x.example": {`{"attempt":0}`, head("MSG", "a@x.example") + subject + `,` + tags + `,"attempt":0}`},
			"email.queued b@x.example": {`{"attempt":0}`, head("MSG", "b@x.example") + subject + `,` + tags + `,"attempt":0}`},
			"email.queued c@x.example": {`{"attempt":0}`, head("MSG", "c@x.example") + subject + `,` + tags + `,"attempt":0}`},
			"email.queued d@y.example": {`{"attempt":0}`, head("BARE", "d@y.example") + `"subject":"Your receipt","tags":{},"attempt":0}`},
			"email.delivered a@x.example": {
				`{"smtpCode":250,"smtpResponse":"250 2.0.0 \u003cok\u003e \u0026 \"queued\"","mx":"mx.x.example","unencrypted":true,"tls":null,"attempt":1}`,
				head("MSG", "a@x.example") + subject + `,` + tags +
					`,"smtpCode":250,"smtpResponse":"250 2.0.0 \u003cok\u003e \u0026 \"queued\"","mx":"mx.x.example","unencrypted":true,"tls":null,"attempt":1}`},
			"email.bounced b@x.example": {
				`{"smtpCode":550,"smtpResponse":"550 5.1.1 no such user","bounceType":"hard","attempt":1}`,
				head("MSG", "b@x.example") + subject + `,` + tags + `,"smtpCode":550,"smtpResponse":"550 5.1.1 no such user","bounceType":"hard","attempt":1}`},
			"email.deferred c@x.example": {
				`{"smtpCode":451,` + deferralJSON + `,"attempt":1}`,
				head("MSG", "c@x.example") + subject + `,` + tags + `,"smtpCode":451,` + deferralJSON + `,"attempt":1}`},
			"email.complained a@x.example": {
				`{"async":true,"reportText":"This is spam \u003creally\u003e","attempt":1}`,
				head("MSG", "a@x.example") + subject + `,` + tags + `,"async":true,"reportText":"This is spam \u003creally\u003e","attempt":1}`},
		}
		if e.Name == "sqlite" {
			// A reply not valid UTF-8: kept whole, as the API shows it.
			w := want["email.deferred c@x.example"]
			want["email.deferred c@x.example"] = struct{ stored, read string }{w.read, w.read}
		}
		ids := strings.NewReplacer("MSG", tagged.ID, "BARE", bare.ID)
		rows, err := db.QueryContext(ctx, `SELECT type, recipient, data FROM events`)
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for rows.Next() {
			var typ, rcpt, data string
			if err := rows.Scan(&typ, &rcpt, &data); err != nil {
				t.Fatal(err)
			}
			n++
			if w, ok := want[typ+" "+rcpt]; !ok || data != ids.Replace(w.stored) {
				t.Errorf("%s %s, stored:\n got  %s\n want %s", typ, rcpt, data, ids.Replace(w.stored))
			}
		}
		if err := rows.Err(); err != nil {
			t.Fatal(err)
		}
		rows.Close()
		listed, _ := storetest.Try2(s.ListEvents(ctx, acct.ID, mailroom.EventFilter{}, mailroom.Page{Limit: 100})).Must(t)
		for _, x := range listed {
			if w := want[x.Type+" "+x.Recipient]; string(x.Data) != ids.Replace(w.read) {
				t.Errorf("%s %s, read:\n got  %s\n want %s", x.Type, x.Recipient, x.Data, ids.Replace(w.read))
			}
		}
		if n != len(want) || len(listed) != len(want) {
			t.Errorf("%d rows, %d events listed, want %d", n, len(listed), len(want))
		}
	})
}

// complaintEvent is the event of a complaint as package inbound's Reports
// makes it: async, with the reporter's text.
func complaintEvent(m *mailroom.MessageSummary, r *mailroom.Recipient, now time.Time) *mailroom.Event {
	ev := mailroom.NewEmailEvent(m, r, mailroom.EventEmailComplained, now)
	ev.Email.EmailEventDetail = mailroom.EmailEventDetail{Async: true, ReportText: "This is spam <really>", Attempt: r.Attempts}
	return ev
}
