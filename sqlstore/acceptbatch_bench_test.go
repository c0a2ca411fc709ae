package sqlstore

import (
	"fmt"
	"testing"
	"time"

	"github.com/mailroom/mailroom"
)

// benchMessages are n messages of two recipients each, as an API send
// makes them: a display name, a subject, two tags.
func benchMessages(n int) []*mailroom.Message {
	at := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	ms := make([]*mailroom.Message, n)
	for i := range ms {
		created := at.Add(time.Duration(i) * time.Millisecond)
		m := &mailroom.Message{ID: mailroom.NewID(mailroom.PrefixMessage, created), AccountID: "acct_bench",
			From:    mailroom.Address{Name: "Shop", Address: "orders@shop.example"},
			Subject: "Your receipt", Category: mailroom.CategoryTransactional, Text: "Thanks", Domain: "shop.example",
			CreatedAt: created, Tags: map[string]string{"kind": "receipt", "order": fmt.Sprint(i)}}
		for j := range 2 {
			a := fmt.Sprintf("r%d-%d@example.net", i, j)
			m.To = append(m.To, mailroom.Address{Address: a})
			m.Recipients = append(m.Recipients, &mailroom.Recipient{Address: a, Kind: mailroom.KindTo})
		}
		ms[i] = m
	}
	return ms
}

// BenchmarkNewAcceptBatch measures the work an accept does in its
// request's goroutine before the transaction (newAcceptBatch) for a batch
// of 100 messages of two recipients: each message's content and envelope
// encoded, each recipient's first event made with its data as its row
// keeps it. µs/event divides the whole by the 200 events.
func BenchmarkNewAcceptBatch(b *testing.B) {
	ms := benchMessages(100)
	for b.Loop() {
		if _, err := newAcceptBatch(ms); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/1000/float64(b.N*200), "µs/event")
}

// BenchmarkEmailEventRowData measures one email event from its making
// (mailroom.NewEmailEvent) to its data as its row keeps it
// (storedEventData), the part of every write of an email event that is
// the same on each path: accept, delivery, report, scheduled start.
func BenchmarkEmailEventRowData(b *testing.B) {
	m := benchMessages(1)[0]
	sum, r := m.Summary(), m.Recipients[0]
	for b.Loop() {
		if data := storedEventData(mailroom.NewEmailEvent(sum, r, mailroom.EventEmailQueued, m.CreatedAt)); data == "" {
			b.Fatal("no data")
		}
	}
}
