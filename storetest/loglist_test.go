package storetest_test

import (
	"bytes"
	"context"
	"fmt"
	"runtime"
	"testing"
	"time"

	"github.com/mailroom/mailroom"
	"github.com/mailroom/mailroom/storetest"
)

// TestLogDoesNotReadContent proves that the email log reads no message
// content: listing 20 messages that each carry a 2 MiB attachment, and
// reading one of them, must allocate far less than one attachment. Reading
// content would allocate each attachment several times over (the column's
// string, its base64 decoding), so the bound is not close to either side.
//
// TotalAlloc counts every goroutine's allocations; nothing else in this
// test binary runs meanwhile (no test here is parallel), and the store's
// own idle goroutines allocate next to nothing.
func TestLogDoesNotReadContent(t *testing.T) {
	if testing.Short() {
		t.Skip("stores 40 MiB of attachments")
	}
	const (
		messages   = 20
		attachment = 2 << 20
		// A generous bound for 20 rows of small columns and their
		// recipients, an eighth of one attachment.
		limit = attachment / 8
	)
	storetest.Each(t, func(t *testing.T, e storetest.Engine) {
		ctx := context.Background()
		s := e.Open(t)
		acct := storetest.NewAccount(t, s, "acme")
		at := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
		content := bytes.Repeat([]byte("0123456789abcdef"), attachment/16)
		for i := range messages {
			m := storetest.NewMessage(acct, at.Add(time.Duration(i)*time.Second), fmt.Sprintf("r%d@x.example", i))
			m.Attachments = []mailroom.Attachment{{Filename: "big.bin", ContentType: "application/octet-stream", Content: content}}
			if _, err := s.AcceptMessage(ctx, m); err != nil {
				t.Fatal(err)
			}
		}
		list := func() []*mailroom.Message {
			page, _, err := s.ListMessages(ctx, acct.ID, mailroom.MessageFilter{}, mailroom.Page{Limit: messages})
			if err != nil {
				t.Fatal(err)
			}
			return page
		}
		// Warm up: prepared statements, connections, the page cache.
		page := list()
		if len(page) != messages {
			t.Fatalf("listed %d messages, want %d", len(page), messages)
		}
		id := page[0].ID
		get := func() {
			if _, _, err := s.Message(ctx, acct.ID, id); err != nil {
				t.Fatal(err)
			}
		}
		get()

		for _, c := range []struct {
			name string
			call func()
		}{
			{"list", func() { list() }},
			{"get", get},
		} {
			const runs = 5
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			for range runs {
				c.call()
			}
			runtime.ReadMemStats(&after)
			per := (after.TotalAlloc - before.TotalAlloc) / runs
			t.Logf("%s: %d bytes allocated per call", c.name, per)
			if per > limit {
				t.Errorf("%s allocated %d bytes per call, over %d: it reads the messages' content", c.name, per, limit)
			}
		}
	})
}
