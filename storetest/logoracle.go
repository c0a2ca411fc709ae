package storetest

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/mailroom/mailroom"
)

func init() {
	extraSuites = append(extraSuites, suite{"MessageLogFilters", testMessageLogFilters})
}

// testMessageLogFilters checks the email log against a filter written in
// Go, for every filter alone and in pairs and triples, over messages whose
// attributes are drawn at random (seeded), paging 4 at a time while a new
// message arrives after the first page: each page must hold the next matches
// newest first, none skipped or repeated, and the newcomers (newer than
// the cursor) none of the older pages; listed oldest first, the same
// matches the other way round. The store picks which filter drives
// its query by counting matches (sqlstore's ListMessages): every filter
// gets to drive in some case.
func testMessageLogFilters(t *testing.T, s mailroom.Store) {
	ctx := context.Background()
	acct, other := NewAccount(t, s, "acme"), NewAccount(t, s, "globex")
	rng := rand.New(rand.NewPCG(1, 2))
	var all []*mailroom.Message
	tpl := &mailroom.TemplateRef{ID: "tpl_01jz0000000000000000000000", Name: "welcome", Version: 1}
	newMessage := func(acct *mailroom.Account, at time.Time) *mailroom.Message {
		m := NewMessage(acct, at, fmt.Sprintf("R%d@x.example", rng.IntN(4)))
		m.From.Address = fmt.Sprintf("s%d@Shop.example", rng.IntN(3))
		m.Tags = map[string]string{"kind": fmt.Sprintf("k%d", rng.IntN(3))}
		if rng.IntN(2) == 0 {
			m.Tags["rare"] = "yes"
		}
		if rng.IntN(3) == 0 {
			m.Category = mailroom.CategoryMarketing
		}
		if rng.IntN(4) == 0 {
			m.Template = tpl
		}
		if rng.IntN(5) == 0 {
			m.ScheduledAt = new(at.Add(time.Hour)) // status scheduled
		}
		return m
	}
	for i := range 90 {
		// Several in one millisecond and others microseconds apart, so
		// that since/until fall between messages of one millisecond.
		at := t0.Add(time.Duration(i/3)*time.Millisecond + time.Duration(i%3)*100*time.Microsecond)
		m := newMessage(acct, at)
		if _, err := s.AcceptMessage(ctx, m); err != nil {
			t.Fatal(err)
		}
		all = append(all, m)
		if _, err := s.AcceptMessage(ctx, newMessage(other, at)); err != nil {
			t.Fatal(err)
		}
	}
	slices.Reverse(all) // newest first
	// The log bounds since/until by id: an id that is not of its
	// message's creation time is refused, not stored out of reach.
	skewed := NewMessage(acct, t0.Add(time.Hour), "a@x.example")
	skewed.CreatedAt = t0
	if _, err := s.AcceptMessage(ctx, skewed); err == nil {
		t.Fatal("accepted a message whose id is an hour after its creation time")
	}
	skewed.CreatedAt = t0.Add(time.Hour + 999*time.Microsecond) // the same millisecond
	if _, err := s.AcceptMessage(ctx, skewed); err != nil {
		t.Fatal(err)
	}
	all = append([]*mailroom.Message{skewed}, all...)
	since, until := t0.Add(10*time.Millisecond+100*time.Microsecond), t0.Add(30*time.Millisecond+200*time.Microsecond)
	singles := []mailroom.MessageFilter{
		{Status: mailroom.MessageScheduled},
		{Status: mailroom.MessageQueued},
		{To: "r1@X.example"},
		{From: "S2@shop.example"},
		{Tags: []mailroom.TagFilter{{Key: "kind", Value: "k1"}}},
		{Tags: []mailroom.TagFilter{{Key: "rare", Value: "yes"}}},
		{Category: mailroom.CategoryMarketing},
		{Template: "welcome"},
		{Template: tpl.ID},
		{Since: &since},
		{Until: &until},
	}
	merge := func(a, b mailroom.MessageFilter) mailroom.MessageFilter {
		if b.Status != "" {
			a.Status = b.Status
		}
		if b.To != "" {
			a.To = b.To
		}
		if b.From != "" {
			a.From = b.From
		}
		a.Tags = append(slices.Clip(a.Tags), b.Tags...)
		if b.Category != "" {
			a.Category = b.Category
		}
		if b.Template != "" {
			a.Template = b.Template
		}
		if b.Since != nil {
			a.Since = b.Since
		}
		if b.Until != nil {
			a.Until = b.Until
		}
		return a
	}
	filters := []mailroom.MessageFilter{{}}
	for i, a := range singles {
		filters = append(filters, a)
		for j := i + 1; j < len(singles); j++ {
			filters = append(filters, merge(a, singles[j]))
			if k := (i + j) % len(singles); k != i && k != j {
				filters = append(filters, merge(merge(a, singles[j]), singles[k]))
			}
		}
	}
	matches := func(f mailroom.MessageFilter, m *mailroom.Message) bool {
		ok := (f.Status == "" || m.Status == f.Status) &&
			(f.From == "" || mailroom.AddressKey(m.From.Address) == mailroom.AddressKey(f.From)) &&
			(f.Category == "" || m.Category == f.Category) &&
			(f.Since == nil || !m.CreatedAt.Before(*f.Since)) &&
			(f.Until == nil || m.CreatedAt.Before(*f.Until)) &&
			(f.To == "" || mailroom.AddressKey(m.To[0].Address) == mailroom.AddressKey(f.To))
		switch {
		case f.Template == "":
		case m.Template == nil:
			ok = false
		default:
			ok = ok && (f.Template == m.Template.ID || f.Template == m.Template.Name)
		}
		for _, tf := range f.Tags {
			ok = ok && m.Tags[tf.Key] == tf.Value
		}
		return ok
	}
	late := t0.Add(time.Hour)
	for _, f := range filters {
		var want, got []string
		for _, m := range all {
			if matches(f, m) {
				want = append(want, m.ID)
			}
		}
		// Oldest first, the same matches the other way round, whichever
		// filter drives the walk.
		asc := f
		asc.OldestFirst = true
		var gotAsc []string
		for cursor, pages := "", 0; ; pages++ {
			if pages > len(all)+1 {
				t.Fatalf("%+v: paging does not end", asc)
			}
			page, next := Try2(s.ListMessages(ctx, acct.ID, asc, mailroom.Page{Limit: 4, Cursor: cursor})).Must(t)
			for _, m := range page {
				gotAsc = append(gotAsc, m.ID)
			}
			if next == "" {
				break
			}
			cursor = next
		}
		slices.Reverse(gotAsc)
		if !slices.Equal(gotAsc, want) {
			t.Errorf("filter %+v, oldest first (shown reversed):\n got %d %v\nwant %d %v", f, len(gotAsc), gotAsc, len(want), want)
		}
		cursor := ""
		var newcomers []*mailroom.Message
		for pages := 0; ; pages++ {
			if pages > len(all)+1 {
				t.Fatalf("%+v: paging does not end", f)
			}
			page, next := Try2(s.ListMessages(ctx, acct.ID, f, mailroom.Page{Limit: 4, Cursor: cursor})).Must(t)
			for _, m := range page {
				got = append(got, m.ID)
			}
			if next == "" {
				break
			}
			cursor = next
			if pages > 0 {
				continue
			}
			// A newcomer after the first page: newer than every cursor.
			late = late.Add(time.Millisecond)
			m := newMessage(acct, late)
			if _, err := s.AcceptMessage(ctx, m); err != nil {
				t.Fatal(err)
			}
			newcomers = append(newcomers, m)
		}
		if !slices.Equal(got, want) {
			t.Errorf("filter %+v:\n got %d %v\nwant %d %v", f, len(got), got, len(want), want)
		}
		// The next filter's first page sees them, newest first.
		slices.Reverse(newcomers)
		all = append(newcomers, all...)
	}
}
