package client

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"iter"
	"maps"
	"net/url"
	"slices"
	"strconv"
	"time"

	"github.com/mailroom/mailroom/client/api"
)

// Every list route has two methods: List… answers one page (at most
// Limit items, with the cursor of the next), and All… returns an iterator
// over every item from Cursor on, fetching the pages as it goes:
//
//	for m, err := range c.AllMessages(ctx, &mailroom.MessageListOptions{Status: mailroom.MessageBounced}) {
//		if err != nil {
//			return err
//		}
//		fmt.Println(m.ID, m.Subject)
//	}
//
// An iterator stops at the first error, which it yields with the zero
// item, and at a break. A cursor answered twice is such an error
// (ErrRepeatedCursor), so that pages in a circle do not loop forever.
// All… asks for pages of 100 unless Limit says otherwise.

// allPageSize is the page size of the All… iterators unless the options
// give one.
const allPageSize = 100

// ListOptions pages a list without filters.
type ListOptions struct {
	// Limit is the page's size, 1..100; 0 is the service's default (20),
	// or 100 for an All… iterator.
	Limit int
	// Cursor is a NextCursor the same list (with the same filters)
	// answered: the page after it. "" is the first page.
	Cursor string
}

func (o *ListOptions) values() url.Values {
	q := url.Values{}
	if o == nil {
		return q
	}
	if o.Limit != 0 {
		q.Set("limit", strconv.Itoa(o.Limit))
	}
	if o.Cursor != "" {
		q.Set("cursor", o.Cursor)
	}
	return q
}

// MessageListOptions are the email log's filters (docs/api.md "The email
// log"), all of which must match, and its paging. A zero field filters
// nothing.
type MessageListOptions struct {
	Status MessageStatus
	// To matches an address among to, cc and bcc; From the bare sender
	// address; both ignoring case.
	To   string
	From string
	// Tags must all match (at most 10), key → value.
	Tags     map[string]string
	Category Category
	// Since (inclusive) and Until (exclusive) bound the creation time.
	Since time.Time
	Until time.Time
	// Template is a template's id or name: messages rendered from any of
	// its versions.
	Template string
	// Engagement keeps the messages some recipient of which opened
	// (EngagementOpened) or clicked (EngagementClicked): docs/api.md
	// "Engagement tracking".
	Engagement Engagement

	Limit  int
	Cursor string
}

// Engagement is the email log's event filter (MessageListOptions).
type Engagement string

const (
	EngagementOpened  Engagement = "opened"
	EngagementClicked Engagement = "clicked"
)

func (o *MessageListOptions) values() url.Values {
	if o == nil {
		return url.Values{}
	}
	q := (&ListOptions{Limit: o.Limit, Cursor: o.Cursor}).values()
	setNonEmpty(q, "status", string(o.Status))
	setNonEmpty(q, "to", o.To)
	setNonEmpty(q, "from", o.From)
	for _, k := range slices.Sorted(maps.Keys(o.Tags)) {
		q.Add("tag", k+":"+o.Tags[k])
	}
	setNonEmpty(q, "category", string(o.Category))
	setTime(q, "since", o.Since)
	setTime(q, "until", o.Until)
	setNonEmpty(q, "template", o.Template)
	setNonEmpty(q, "event", string(o.Engagement))
	return q
}

// EventListOptions are the filters of GET /v1/events and its paging.
type EventListOptions struct {
	Type EventType
	// MessageID selects one message's events.
	MessageID string
	// Since selects the events created at or after it.
	Since time.Time

	Limit  int
	Cursor string
}

func (o *EventListOptions) values() url.Values {
	if o == nil {
		return url.Values{}
	}
	q := (&ListOptions{Limit: o.Limit, Cursor: o.Cursor}).values()
	setNonEmpty(q, "type", string(o.Type))
	setNonEmpty(q, "messageId", o.MessageID)
	setTime(q, "since", o.Since)
	return q
}

// DeliveryListOptions are the filters of GET /v1/webhooks/{id}/deliveries
// and its paging.
type DeliveryListOptions struct {
	// EventID selects the attempts of one event's deliveries.
	EventID string
	// Status is AttemptSucceeded or AttemptFailed.
	Status AttemptStatus

	Limit  int
	Cursor string
}

func (o *DeliveryListOptions) values() url.Values {
	if o == nil {
		return url.Values{}
	}
	q := (&ListOptions{Limit: o.Limit, Cursor: o.Cursor}).values()
	setNonEmpty(q, "eventId", o.EventID)
	setNonEmpty(q, "status", string(o.Status))
	return q
}

func setNonEmpty(q url.Values, name, value string) {
	if value != "" {
		q.Set(name, value)
	}
}

func setTime(q url.Values, name string, t time.Time) {
	if !t.IsZero() {
		q.Set(name, t.UTC().Format(time.RFC3339Nano))
	}
}

// list fetches one page of a list route.
func list[T any](ctx context.Context, c *Client, path string, q url.Values) (*api.List[T], error) {
	cl := &call{method: "GET", path: path, query: q, mode: retrySafe}
	out := new(api.List[T])
	cl.out = out
	if err := c.do(ctx, cl); err != nil {
		return nil, err
	}
	return out, nil
}

// ErrRepeatedCursor is the error an All… iterator yields when the service
// answers a cursor it answered before (or the one it was asked with):
// its pages go round in a circle, which would never end, and the list it
// gave is not to be trusted as complete. The service never does this (each
// page holds items strictly older than the last); a broken proxy or a
// server that is not Mailroom might.
var ErrRepeatedCursor = errors.New("the service answered a cursor it had answered before")

// pages iterates over the items of every page from cursor on; fetch gets
// the page after a cursor ("" for the first).
func pages[T any](ctx context.Context, cursor string, fetch func(ctx context.Context, cursor string) (*api.List[T], error)) iter.Seq2[T, error] {
	return func(yield func(T, error) bool) {
		var zero T
		// Every cursor followed, to stop at the first that comes back
		// whatever the length of the circle. A digest each keeps the
		// memory to a few dozen bytes a page, however long a hostile
		// server makes its cursors.
		seen := map[[sha256.Size]byte]bool{sha256.Sum256([]byte(cursor)): true}
		for {
			page, err := fetch(ctx, cursor)
			if err != nil {
				yield(zero, err)
				return
			}
			for _, item := range page.Data {
				if !yield(item, nil) {
					return
				}
			}
			next := page.Cursor()
			if next == "" {
				return
			}
			sum := sha256.Sum256([]byte(next))
			if seen[sum] {
				yield(zero, fmt.Errorf("mailroom: %w: %.100q", ErrRepeatedCursor, next))
				return
			}
			seen[sum] = true
			cursor = next
		}
	}
}

// pageSize is the Limit of an All… iterator's pages.
func pageSize(limit int) int {
	if limit == 0 {
		return allPageSize
	}
	return limit
}
