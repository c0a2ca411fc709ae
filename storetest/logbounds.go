package storetest

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/mailroom/mailroom"
)

func init() {
	extraSuites = append(extraSuites,
		suite{"MessageLogBounds", testMessageLogBounds},
		suite{"MessageContent", testMessageContent},
	)
}

// testMessageLogBounds: the log bounded by message ids (OlderThan,
// NewerThan) and walked oldest first. Several messages share a
// millisecond, where only their ids order them; another account's
// messages lie between them and must never be listed. Paging from a
// message toward newer ones (NewerThan, oldest first) gives the messages
// just after it, page by page, and each page's cursor says whether more
// follow.
func testMessageLogBounds(t *testing.T, s mailroom.Store) {
	ctx := context.Background()
	acct, other := NewAccount(t, s, "acme"), NewAccount(t, s, "globex")
	var ids []string // oldest first
	for i := range 10 {
		at := t0.Add(time.Duration(i/3) * time.Millisecond)
		m := NewMessage(acct, at, "a@x.example")
		if i%2 == 0 {
			m.ScheduledAt = new(at.Add(time.Hour))
		}
		Try(s.AcceptMessage(ctx, m)).Must(t)
		ids = append(ids, m.ID)
		Try(s.AcceptMessage(ctx, NewMessage(other, at, "a@x.example"))).Must(t)
	}
	list := func(f mailroom.MessageFilter, limit int) []string {
		t.Helper()
		var got []string
		cursor := ""
		for pages := 0; ; pages++ {
			if pages > len(ids)+1 {
				t.Fatalf("%+v: paging does not end", f)
			}
			page, next := Try2(s.ListMessages(ctx, acct.ID, f, mailroom.Page{Limit: limit, Cursor: cursor})).Must(t)
			for _, m := range page {
				got = append(got, m.ID)
			}
			if next == "" {
				return got
			}
			cursor = next
		}
	}
	newestFirst := slices.Clone(ids)
	slices.Reverse(newestFirst)
	reversed := func(s []string) []string { s = slices.Clone(s); slices.Reverse(s); return s }
	cases := []struct {
		name string
		f    mailroom.MessageFilter
		want []string
	}{
		{"all, oldest first", mailroom.MessageFilter{OldestFirst: true}, ids},
		{"older than the 7th", mailroom.MessageFilter{OlderThan: ids[6]}, reversed(ids[:6])},
		{"newer than the 4th", mailroom.MessageFilter{NewerThan: ids[3]}, reversed(ids[4:])},
		{"newer than the 4th, oldest first", mailroom.MessageFilter{NewerThan: ids[3], OldestFirst: true}, ids[4:]},
		{"between", mailroom.MessageFilter{NewerThan: ids[1], OlderThan: ids[8]}, reversed(ids[2:8])},
		{"between, oldest first", mailroom.MessageFilter{NewerThan: ids[1], OlderThan: ids[8], OldestFirst: true}, ids[2:8]},
		{"scheduled newer than the 2nd, oldest first", mailroom.MessageFilter{Status: mailroom.MessageScheduled, NewerThan: ids[1], OldestFirst: true},
			[]string{ids[2], ids[4], ids[6], ids[8]}},
		{"older than the oldest", mailroom.MessageFilter{OlderThan: ids[0]}, nil},
		{"newer than the newest", mailroom.MessageFilter{NewerThan: ids[9], OldestFirst: true}, nil},
		{"bounds the wrong way round", mailroom.MessageFilter{NewerThan: ids[6], OlderThan: ids[3]}, nil},
	}
	for _, c := range cases {
		for _, limit := range []int{1, 3, 100} {
			if got := list(c.f, limit); !slices.Equal(got, c.want) {
				t.Errorf("%s (pages of %d):\n got %v\nwant %v", c.name, limit, got, c.want)
			}
		}
	}
	// The page just after a message, oldest first: the 3 after the 2nd,
	// with a cursor since more follow; the 3 after the 7th are the last.
	page, next := Try2(s.ListMessages(ctx, acct.ID, mailroom.MessageFilter{NewerThan: ids[1], OldestFirst: true}, mailroom.Page{Limit: 3})).Must(t)
	if got := idsOf(page); !slices.Equal(got, ids[2:5]) || next == "" {
		t.Errorf("3 after the 2nd: %v (next %q), want %v and a cursor", got, next, ids[2:5])
	}
	page, next = Try2(s.ListMessages(ctx, acct.ID, mailroom.MessageFilter{NewerThan: ids[6], OldestFirst: true}, mailroom.Page{Limit: 3})).Must(t)
	if got := idsOf(page); !slices.Equal(got, ids[7:]) || next != "" {
		t.Errorf("3 after the 7th: %v (next %q), want %v and no cursor", got, next, ids[7:])
	}
	// Another account's message is a position like any other: the
	// messages of acct after it, none of its own.
	theirs, _ := Try2(s.ListMessages(ctx, other.ID, mailroom.MessageFilter{}, mailroom.Page{Limit: 1})).Must(t)
	older, _ := Try2(s.ListMessages(ctx, acct.ID, mailroom.MessageFilter{OlderThan: theirs[0].ID}, mailroom.Page{})).Must(t)
	var want []string
	for _, id := range newestFirst {
		if id < theirs[0].ID { // ids of one kind sort as their times
			want = append(want, id)
		}
	}
	if got := idsOf(older); !slices.Equal(got, want) {
		t.Errorf("older than another account's newest: %v, want %v", got, want)
	}
	for _, f := range []mailroom.MessageFilter{{OlderThan: "msg_nope"}, {NewerThan: "4ef9a417-02e9-4d39-ad75-9611e0fcc33c"}} {
		_, _, err := s.ListMessages(ctx, acct.ID, f, mailroom.Page{})
		wantCode(t, err, mailroom.ECodeValidation)
	}
}

func idsOf(ms []*mailroom.Message) []string {
	out := make([]string, len(ms))
	for i, m := range ms {
		out[i] = m.ID
	}
	return out
}

// testMessageContent: a message's content reads back as it was accepted,
// beside what the log shows of it, and only in its own account.
func testMessageContent(t *testing.T, s mailroom.Store) {
	ctx := context.Background()
	acct, other := NewAccount(t, s, "acme"), NewAccount(t, s, "globex")
	m := NewMessage(acct, t0, "a@x.example", "b@y.example")
	m.HTML, m.Text = "<p>Thanks for <b>your order</b></p>", "Thanks for your order"
	m.Headers = []mailroom.Header{{Name: "X-Order", Value: "1234"}}
	m.Attachments = []mailroom.Attachment{{Filename: "receipt.pdf", ContentType: "application/pdf", Content: []byte("%PDF-1.7")}}
	m.Cc = []mailroom.Address{{Name: "Desk", Address: "desk@shop.example"}}
	Try(s.AcceptMessage(ctx, m)).Must(t)

	got := Try(s.MessageContent(ctx, acct.ID, m.ID)).Must(t)
	if got.ID != m.ID || got.HTML != m.HTML || got.Text != m.Text || got.MessageIDHeader != m.MessageIDHeader ||
		!slices.Equal(got.Headers, m.Headers) {
		t.Errorf("content: %+v", got)
	}
	if got.Attachments != nil || got.Raw != nil {
		t.Errorf("content read its attachments or raw bytes: %d attachments, %d raw bytes", len(got.Attachments), len(got.Raw))
	}
	if got.Status != mailroom.MessageQueued || got.Subject != m.Subject || got.From != m.From || !slices.Equal(got.Cc, m.Cc) ||
		len(got.Recipients) != 2 || got.Recipients[1].Address != "b@y.example" || got.Tags["kind"] != "receipt" || !got.CreatedAt.Equal(t0) {
		t.Errorf("the log's fields beside the content: %+v", got)
	}
	_, err := s.MessageContent(ctx, other.ID, m.ID)
	wantCode(t, err, mailroom.ECodeNotFound)
	_, err = s.MessageContent(ctx, acct.ID, mailroom.NewID(mailroom.PrefixMessage, t0))
	wantCode(t, err, mailroom.ECodeNotFound)
}
