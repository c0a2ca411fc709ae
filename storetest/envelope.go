package storetest

import (
	"context"
	"reflect"
	"testing"
	"time"

	"github.com/mailroom/mailroom"
)

func init() {
	extraSuites = append(extraSuites, suite{"MessageEnvelope", testMessageEnvelope})
}

// testMessageEnvelope holds the email log to what it shows of a message:
// every address with its name, in order, and the tags, from both the list
// and the single read. Both read the envelope alone, never the content, so
// the bodies and attachments must not come back from them either.
func testMessageEnvelope(t *testing.T, s mailroom.Store) {
	ctx := context.Background()
	acct := NewAccount(t, s, "acme")
	full := NewMessage(acct, t0, "a@x.example", "b@x.example")
	full.From = mailroom.Address{Name: "Shop, Inc.", Address: "orders@shop.example"}
	full.To[1].Name = "Bé Ünïcode"
	full.Cc = []mailroom.Address{{Name: "Carbon", Address: "c@y.example"}}
	full.Bcc = []mailroom.Address{{Address: "d@z.example"}}
	full.ReplyTo = []mailroom.Address{{Name: "Help", Address: "help@shop.example"}, {Address: "desk@shop.example"}}
	full.Tags = map[string]string{"kind": "receipt", "order": "42"}
	full.HTML = "<p>Thanks</p>"
	full.Attachments = []mailroom.Attachment{{Filename: "r.pdf", ContentType: "application/pdf", Content: []byte("%PDF-")}}
	full.Recipients = append(full.Recipients,
		&mailroom.Recipient{Address: "c@y.example", Kind: mailroom.KindCc},
		&mailroom.Recipient{Address: "d@z.example", Kind: mailroom.KindBcc})
	// A message with no cc, bcc, reply-to or tags: those come back empty.
	bare := NewMessage(acct, t0.Add(time.Second), "e@x.example")
	bare.Tags = nil
	for _, m := range []*mailroom.Message{full, bare} {
		if _, err := s.AcceptMessage(ctx, m); err != nil {
			t.Fatal(err)
		}
	}

	check := func(how string, got, want *mailroom.Message) {
		t.Helper()
		for _, f := range []struct {
			name      string
			got, want any
		}{
			{"from", got.From, want.From},
			{"to", got.To, want.To},
			{"cc", got.Cc, want.Cc},
			{"bcc", got.Bcc, want.Bcc},
			{"replyTo", got.ReplyTo, want.ReplyTo},
			{"tags", got.Tags, want.Tags},
		} {
			if !reflect.DeepEqual(f.got, f.want) {
				t.Errorf("%s %s: %s = %#v, want %#v", how, want.ID, f.name, f.got, f.want)
			}
		}
		if got.Subject != want.Subject || got.Category != want.Category || !got.CreatedAt.Equal(want.CreatedAt) {
			t.Errorf("%s %s: subject %q, category %q, createdAt %v", how, want.ID, got.Subject, got.Category, got.CreatedAt)
		}
		if got.Text != "" || got.HTML != "" || got.Attachments != nil || got.MessageIDHeader != "" {
			t.Errorf("%s %s: the log read the message's content", how, want.ID)
		}
	}
	list, _ := Try2(s.ListMessages(ctx, acct.ID, mailroom.MessageFilter{}, mailroom.Page{})).Must(t)
	if len(list) != 2 || list[0].ID != bare.ID || list[1].ID != full.ID {
		t.Fatalf("list: %d messages", len(list))
	}
	check("listed", list[1], full)
	check("listed", list[0], bare)
	for _, want := range []*mailroom.Message{full, bare} {
		got, _, err := s.Message(ctx, acct.ID, want.ID)
		if err != nil {
			t.Fatal(err)
		}
		check("got", got, want)
	}
	// Delivery still reads the whole message.
	m, _, err := s.MessageForDelivery(ctx, full.ID)
	if err != nil {
		t.Fatal(err)
	}
	if m.HTML != full.HTML || len(m.Attachments) != 1 || string(m.Attachments[0].Content) != "%PDF-" ||
		m.MessageIDHeader != full.MessageIDHeader || !reflect.DeepEqual(m.Cc, full.Cc) {
		t.Fatalf("message for delivery lost content: %+v", m)
	}
}
