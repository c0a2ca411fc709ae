package storetest

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"testing"
	"time"

	"github.com/mailroom/mailroom"
)

// Received mail (docs/api.md "Receiving mail"): each message stored whole
// with its email.received event or not at all, read back as stored on
// both engines whatever bytes it held, listed newest first with its
// filters, found only by its own account, removed by retention; and the
// domains the inbound MX takes mail for.

func init() {
	extraSuites = append(extraSuites,
		suite{"ReceivedSaveAndRead", testReceivedSaveAndRead},
		suite{"ReceivedAllOrNothing", testReceivedAllOrNothing},
		suite{"ReceivedListFiltersAndPages", testReceivedList},
		suite{"ReceivedRetention", testReceivedRetention},
		suite{"ReceivingDomains", testReceivingDomains},
	)
}

// NewReceived returns an unsaved received message of acct for to, received
// at at, with one attachment, and its email.received event.
func NewReceived(t testing.TB, acct *mailroom.Account, to string, at time.Time) (*mailroom.ReceivedMessage, *mailroom.Event) {
	t.Helper()
	raw := []byte("Authentication-Results: mx.test; spf=pass\r\nFrom: Ann <ann@sender.test>\r\nTo: " + to + "\r\nSubject: hi\r\n\r\nhello\r\n")
	m := &mailroom.ReceivedMessage{
		ID: mailroom.NewID(mailroom.PrefixReceived, at), AccountID: acct.ID,
		MailFrom: "bounce@sender.test", Recipients: []string{to},
		From: "Ann <ann@sender.test>", To: []string{to}, Cc: []string{"cc@example.org"}, Subject: "hi",
		MessageID: "<1@sender.test>", RemoteIP: "192.0.2.1", Helo: "mail.sender.test", ReceivedAt: at,
		Authentication: mailroom.ReceivedAuthentication{SPF: mailroom.AuthPass, DKIM: mailroom.AuthPass, DMARC: mailroom.AuthPass,
			DKIMSignatures: []mailroom.DKIMSignatureResult{{Domain: "sender.test", Selector: "s1", Result: mailroom.AuthPass}}},
		Headers: []mailroom.ReceivedHeader{{Name: "From", Value: "Ann <ann@sender.test>"}, {Name: "Subject", Value: "hi"}},
		Text:    "hello\n", HTML: "<p>hello</p>",
		Attachments: []mailroom.ReceivedAttachment{{ID: mailroom.PrefixReceivedAttachment + "1", Filename: "a.pdf",
			ContentType: "application/pdf", Size: 4, Content: []byte("%PDF")}},
		Raw: raw, Size: int64(len(raw)),
	}
	return m, receivedEvent(t, m)
}

func receivedEvent(t testing.TB, m *mailroom.ReceivedMessage) *mailroom.Event {
	t.Helper()
	return Try(mailroom.NewEvent(m.AccountID, mailroom.EventEmailReceived, mailroom.ReceivedEventData{
		ReceivedID: m.ID, From: m.From, To: m.To, Cc: m.Cc, Recipients: m.Recipients, Subject: m.Subject,
		MessageID: m.MessageID, ReceivedAt: m.ReceivedAt, Authentication: m.Authentication, Attachments: m.Attachments,
	}, m.ReceivedAt)).Must(t)
}

func saveReceived(t *testing.T, s mailroom.Store, m *mailroom.ReceivedMessage, e *mailroom.Event) {
	t.Helper()
	if err := s.SaveReceived(context.Background(), []*mailroom.ReceivedMessage{m}, []*mailroom.Event{e}); err != nil {
		t.Fatal(err)
	}
}

// receivedEvents are acct's email.received events.
func receivedEvents(t *testing.T, s mailroom.Store, acct *mailroom.Account) []*mailroom.Event {
	t.Helper()
	evs, _ := Try2(s.ListEvents(context.Background(), acct.ID, mailroom.EventFilter{Type: mailroom.EventEmailReceived},
		mailroom.Page{Limit: mailroom.MaxPageLimit})).Must(t)
	return evs
}

func testReceivedSaveAndRead(t *testing.T, s mailroom.Store) {
	ctx := context.Background()
	acme, globex := NewAccount(t, s, "acme"), NewAccount(t, s, "globex")
	m, _ := NewReceived(t, acme, "support+tag@in.example.com", t0)
	// Anyone's bytes: a NUL, an invalid UTF-8 byte and a second
	// attachment holding both, in the raw and the parsed strings alike.
	m.Raw = append(m.Raw, 0, 0xff, 0xfe, '\r', '\n')
	m.Size = int64(len(m.Raw))
	m.Subject = "bad \xff byte and \x00 nul"
	m.Text = "text \xfe\x00"
	m.Headers = append(m.Headers, mailroom.ReceivedHeader{Name: "X-Odd", Value: "\xff\x00"})
	m.Attachments = append(m.Attachments, mailroom.ReceivedAttachment{ID: mailroom.PrefixReceivedAttachment + "2",
		Filename: "page.html", ContentType: "text/html", Size: 5, ContentID: "img1@sender.test", Content: []byte{0, 0xff, '<', 'b', '>'}})
	e := receivedEvent(t, m)
	saveReceived(t, s, m, e)

	got := Try(s.Received(ctx, acme.ID, m.ID)).Must(t)
	if got.Subject != "bad \uFFFD byte and \uFFFD nul" || got.Text != "text \uFFFD\uFFFD" {
		t.Fatalf("invalid text read back as subject %q text %q", got.Subject, got.Text)
	}
	// Inside a JSON column a NUL is the escape \u0000, which both
	// engines keep.
	if h := got.Headers[len(got.Headers)-1]; h.Value != "\uFFFD\x00" {
		t.Fatalf("invalid header value read back as %q", h.Value)
	}
	want := *m
	want.Subject, want.Text, want.Headers = got.Subject, got.Text, got.Headers
	want.Raw = nil
	want.Attachments = nil
	for _, a := range m.Attachments {
		a.Content = nil
		want.Attachments = append(want.Attachments, a)
	}
	if !reflect.DeepEqual(got, &want) {
		t.Fatalf("read back\n%+v\nwant\n%+v", got, &want)
	}
	if raw := Try(s.ReceivedRaw(ctx, acme.ID, m.ID)).Must(t); !bytes.Equal(raw, m.Raw) {
		t.Fatalf("raw read back %q, want %q", raw, m.Raw)
	}
	for _, a := range m.Attachments {
		got := Try(s.ReceivedAttachment(ctx, acme.ID, m.ID, a.ID)).Must(t)
		if !bytes.Equal(got.Content, a.Content) || got.Filename != a.Filename || got.ContentType != a.ContentType ||
			got.Size != a.Size || got.ContentID != a.ContentID {
			t.Fatalf("attachment %s read back %+v %q", a.ID, got, got.Content)
		}
	}

	// Another account's message, or an unknown one, is not found, nor
	// is an attachment the message has not.
	_, err := s.Received(ctx, globex.ID, m.ID)
	wantCode(t, err, mailroom.ECodeNotFound)
	_, err = s.ReceivedRaw(ctx, globex.ID, m.ID)
	wantCode(t, err, mailroom.ECodeNotFound)
	_, err = s.ReceivedAttachment(ctx, globex.ID, m.ID, m.Attachments[0].ID)
	wantCode(t, err, mailroom.ECodeNotFound)
	_, err = s.ReceivedAttachment(ctx, acme.ID, m.ID, "att_9")
	wantCode(t, err, mailroom.ECodeNotFound)
	_, err = s.Received(ctx, acme.ID, "rcv_unknown")
	wantCode(t, err, mailroom.ECodeNotFound)

	// The event is stored with it, in the account's events.
	evs := receivedEvents(t, s, acme)
	if len(evs) != 1 || evs[0].ID != e.ID {
		t.Fatalf("events: got %d, want the one saved", len(evs))
	}
	var data mailroom.ReceivedEventData
	if err := json.Unmarshal(evs[0].Data, &data); err != nil || data.ReceivedID != m.ID || len(data.Attachments) != 2 {
		t.Fatalf("event data %s (%v)", evs[0].Data, err)
	}
	if n := len(receivedEvents(t, s, globex)); n != 0 {
		t.Fatalf("another account sees %d received events", n)
	}
}

func testReceivedAllOrNothing(t *testing.T, s mailroom.Store) {
	ctx := context.Background()
	acme := NewAccount(t, s, "acme")
	first, e1 := NewReceived(t, acme, "a@in.example.com", t0)
	saveReceived(t, s, first, e1)

	// A batch whose second message cannot be stored (its id is taken)
	// stores neither message, nor any attachment, nor any event.
	fresh, e2 := NewReceived(t, acme, "b@in.example.com", t0.Add(time.Second))
	dup, e3 := NewReceived(t, acme, "c@in.example.com", t0.Add(2*time.Second))
	dup.ID = first.ID
	err := s.SaveReceived(ctx, []*mailroom.ReceivedMessage{fresh, dup}, []*mailroom.Event{e2, e3})
	wantCode(t, err, mailroom.ECodeAlreadyExists)
	_, err = s.Received(ctx, acme.ID, fresh.ID)
	wantCode(t, err, mailroom.ECodeNotFound)
	_, err = s.ReceivedAttachment(ctx, acme.ID, fresh.ID, fresh.Attachments[0].ID)
	wantCode(t, err, mailroom.ECodeNotFound)
	if evs := receivedEvents(t, s, acme); len(evs) != 1 {
		t.Fatalf("after a failed batch %d events, want the first alone", len(evs))
	}

	// An event that cannot be stored takes its message with it.
	lone, _ := NewReceived(t, acme, "d@in.example.com", t0.Add(3*time.Second))
	err = s.SaveReceived(ctx, []*mailroom.ReceivedMessage{lone}, []*mailroom.Event{e1})
	if err == nil {
		t.Fatal("an event stored twice was taken")
	}
	_, err = s.Received(ctx, acme.ID, lone.ID)
	wantCode(t, err, mailroom.ECodeNotFound)

	// A message of no account is refused.
	ghost, ge := NewReceived(t, &mailroom.Account{ID: "acct_nobody"}, "e@in.example.com", t0)
	wantCode(t, s.SaveReceived(ctx, []*mailroom.ReceivedMessage{ghost}, []*mailroom.Event{ge}), mailroom.ECodeNotFound)
}

func testReceivedList(t *testing.T, s mailroom.Store) {
	ctx := context.Background()
	acme, globex := NewAccount(t, s, "acme"), NewAccount(t, s, "globex")
	for i := range 7 {
		// Two share each time, so that ties page too; every other one
		// is for sales_team, whose '_' must not match any character.
		to := "Support@In.Example.com"
		if i%2 == 1 {
			to = "sales_team@in.example.com"
		}
		m, e := NewReceived(t, acme, to, t0.Add(time.Duration(i/2)*time.Minute))
		m.From = fmt.Sprintf("Sender %d <S%d@Sender.test>", i, i%3)
		saveReceived(t, s, m, e)
	}
	lookalike, le := NewReceived(t, acme, "salesxteam@in.example.com", t0.Add(10*time.Minute))
	saveReceived(t, s, lookalike, le)
	foreign, fe := NewReceived(t, globex, "support@in.example.com", t0)
	saveReceived(t, s, foreign, fe)

	list := func(f mailroom.ReceivedFilter, limit int) []*mailroom.ReceivedMessage {
		t.Helper()
		var all []*mailroom.ReceivedMessage
		seen := map[string]bool{}
		cursor := ""
		for {
			page, next := Try2(s.ListReceived(ctx, acme.ID, f, mailroom.Page{Limit: limit, Cursor: cursor})).Must(t)
			for i, m := range page {
				if seen[m.ID] || m.AccountID != acme.ID {
					t.Fatalf("%s repeated or another account's", m.ID)
				}
				seen[m.ID] = true
				if m.Text != "" || m.HTML != "" || m.Headers != nil || m.Raw != nil || len(m.Attachments) != 1 || m.Attachments[0].Content != nil {
					t.Fatalf("a list item carries more than its summary: %+v", m)
				}
				prev := all
				if i > 0 {
					prev = page[:i]
				}
				if len(prev) > 0 {
					p := prev[len(prev)-1]
					if m.ReceivedAt.After(p.ReceivedAt) || (m.ReceivedAt.Equal(p.ReceivedAt) && m.ID > p.ID) {
						t.Fatalf("not newest first: %s after %s", m.ID, p.ID)
					}
				}
			}
			all = append(all, page...)
			if next == "" {
				return all
			}
			cursor = next
		}
	}
	if all := list(mailroom.ReceivedFilter{}, 3); len(all) != 8 {
		t.Fatalf("all: got %d, want 8", len(all))
	}
	if got := list(mailroom.ReceivedFilter{To: "support@in.example.COM"}, 2); len(got) != 4 {
		t.Fatalf("to support (any case): got %d, want 4", len(got))
	}
	if got := list(mailroom.ReceivedFilter{To: "sales_team@in.example.com"}, 2); len(got) != 3 {
		t.Fatalf("to sales_team: got %d, want 3 (not the look-alike)", len(got))
	}
	if got := list(mailroom.ReceivedFilter{To: "in.example.com"}, 2); len(got) != 0 {
		t.Fatalf("to a part of an address: got %d, want none", len(got))
	}
	if got := list(mailroom.ReceivedFilter{From: "s0@sender.TEST"}, 2); len(got) != 3 {
		t.Fatalf("from s0: got %d, want 3 (0, 3, 6)", len(got))
	}
	since, until := t0.Add(time.Minute), t0.Add(3*time.Minute)
	got := list(mailroom.ReceivedFilter{Since: since, Until: until}, 2)
	if len(got) != 4 {
		t.Fatalf("since..until: got %d, want 4", len(got))
	}
	for _, m := range got {
		if m.ReceivedAt.Before(since) || !m.ReceivedAt.Before(until) {
			t.Fatalf("%s at %v outside [%v, %v)", m.ID, m.ReceivedAt, since, until)
		}
	}
	_, _, err := s.ListReceived(ctx, acme.ID, mailroom.ReceivedFilter{}, mailroom.Page{Cursor: "bm90LWEtY3Vyc29y"})
	wantCode(t, err, mailroom.ECodeValidation)
	if other, _ := Try2(s.ListReceived(ctx, globex.ID, mailroom.ReceivedFilter{}, mailroom.Page{})).Must(t); len(other) != 1 || other[0].ID != foreign.ID {
		t.Fatalf("globex lists %d messages", len(other))
	}
}

func testReceivedRetention(t *testing.T, s mailroom.Store) {
	ctx := context.Background()
	acme := NewAccount(t, s, "acme")
	var made []*mailroom.ReceivedMessage
	for i := range 5 {
		m, e := NewReceived(t, acme, "a@in.example.com", t0.Add(time.Duration(i)*time.Hour))
		saveReceived(t, s, m, e)
		made = append(made, m)
	}
	cutoff := t0.Add(3 * time.Hour) // the first three are older
	if n := Try(s.DeleteReceivedBefore(ctx, cutoff, 2)).Must(t); n != 2 {
		t.Fatalf("first batch deleted %d, want the limit 2", n)
	}
	if n := Try(s.DeleteReceivedBefore(ctx, cutoff, 2)).Must(t); n != 1 {
		t.Fatalf("second batch deleted %d, want 1", n)
	}
	if n := Try(s.DeleteReceivedBefore(ctx, cutoff, 2)).Must(t); n != 0 {
		t.Fatalf("third batch deleted %d, want 0", n)
	}
	for i, m := range made {
		_, err := s.Received(ctx, acme.ID, m.ID)
		_, aerr := s.ReceivedAttachment(ctx, acme.ID, m.ID, m.Attachments[0].ID)
		if i < 3 {
			wantCode(t, err, mailroom.ECodeNotFound)
			wantCode(t, aerr, mailroom.ECodeNotFound)
		} else if err != nil || aerr != nil {
			t.Fatalf("message %d, received at the cutoff or after, is gone: %v %v", i, err, aerr)
		}
	}
	// Nothing of a deleted message is left behind: its attachments'
	// bytes went too, so the same ids store again.
	again := *made[0]
	saveReceived(t, s, &again, receivedEvent(t, &again))
}

func testReceivingDomains(t *testing.T, s mailroom.Store) {
	ctx := context.Background()
	acme, globex, initech := NewAccount(t, s, "acme"), NewAccount(t, s, "globex"), NewAccount(t, s, "initech")
	mk := func(acct *mailroom.Account, name string, receiving bool, status mailroom.DomainStatus, mx mailroom.RecordStatus) {
		t.Helper()
		d := NewDomain(acct, name, t0)
		d.Status, d.Receiving = status, receiving
		p := 10
		d.Records = append(d.Records, mailroom.DNSRecord{Purpose: mailroom.PurposeReceiving, Type: "MX", Name: name,
			Value: "mx.test", Priority: &p, Required: true, Status: mx})
		if err := s.CreateDomain(ctx, d, mailroom.DefaultMaxDomains); err != nil {
			t.Fatal(err)
		}
		if got := Try(s.Domain(ctx, acct.ID, name)).Must(t); got.Receiving != receiving {
			t.Fatalf("%s receiving read back %v", name, got.Receiving)
		}
	}
	mk(acme, "in.example.com", true, mailroom.DomainVerified, mailroom.RecordVerified)
	mk(globex, "in.example.com", true, mailroom.DomainTemporaryFailure, mailroom.RecordVerified)
	mk(initech, "in.example.com", true, mailroom.DomainVerified, mailroom.RecordPending)
	mk(acme, "pending.example.com", true, mailroom.DomainPending, mailroom.RecordVerified)
	mk(acme, "off.example.com", false, mailroom.DomainVerified, mailroom.RecordVerified)

	got := Try(s.ReceivingDomains(ctx, "in.example.com")).Must(t)
	want := map[string]bool{acme.ID: true, globex.ID: true}
	if len(got) != 2 || !want[got[0].AccountID] || !want[got[1].AccountID] || got[0].AccountID == got[1].AccountID || got[0].Name != "in.example.com" {
		t.Fatalf("in.example.com: got %+v, want acme's and globex's (not initech's, whose MX is not verified)", got)
	}
	for _, name := range []string{"pending.example.com", "off.example.com", "unknown.example.com"} {
		if got := Try(s.ReceivingDomains(ctx, name)).Must(t); got == nil || len(got) != 0 {
			t.Fatalf("%s: got %+v, want an empty list", name, got)
		}
	}
}
