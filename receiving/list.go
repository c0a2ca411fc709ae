package receiving

import (
	"context"
	"time"

	"github.com/mailroom/mailroom"
)

// Mailbox serves the received-mail API (docs/api.md "Receiving mail"):
// what an application reads of the mail its receiving domains took. The
// routes (scope receive) and the dashboard's Received page call it, so
// that they cannot disagree on what a filter or an id means.
type Mailbox struct {
	Store mailroom.ReceivedStore
}

// NewFilter reads GET /v1/received's filters as the client gave them: to
// (an envelope recipient) and from (the header's From) are addresses,
// since and until RFC 3339 times with until after since. A value no
// message can match is refused (400 validation_error on its field)
// rather than matching nothing, silently.
func NewFilter(to, from, since, until string) (mailroom.ReceivedFilter, error) {
	var v mailroom.Validator
	var f mailroom.ReceivedFilter
	for _, p := range []struct {
		name, raw string
		dst       *string
	}{{"to", to, &f.To}, {"from", from, &f.From}} {
		if p.raw == "" {
			continue
		}
		a, err := mailroom.ParseAddress(p.raw)
		if err != nil {
			v.Add(p.name, "not an email address")
			continue
		}
		*p.dst = a.Address
	}
	for _, p := range []struct {
		name, raw string
		dst       *time.Time
	}{{"since", since, &f.Since}, {"until", until, &f.Until}} {
		if p.raw == "" {
			continue
		}
		t, err := time.Parse(time.RFC3339, p.raw)
		if err != nil {
			v.Add(p.name, "must be an RFC 3339 time, such as 2026-11-22T10:00:00Z")
			continue
		}
		*p.dst = t.UTC()
	}
	if !f.Since.IsZero() && !f.Until.IsZero() && !f.Until.After(f.Since) {
		// Until is excluded: until == since selects nothing, ever.
		v.Add("until", "must be after since")
	}
	return f, v.Err()
}

// List is a page of the account's received messages, newest first, as
// lists show them: without their headers, bodies or raw bytes.
func (m *Mailbox) List(ctx context.Context, accountID string, f mailroom.ReceivedFilter, p mailroom.Page) ([]*mailroom.ReceivedMessage, string, error) {
	return m.Store.ListReceived(ctx, accountID, f, p)
}
