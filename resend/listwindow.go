package resend

import (
	"net/url"
	"strconv"

	"github.com/mailroom/mailroom"
)

// ListWindow is what Resend's list parameters select from a list, newest
// first (https://resend.com/docs/api-reference/pagination): at most Limit
// items (0: all of them), those after the item whose id is After, or the
// Limit nearest before the item whose id is Before.
type ListWindow struct {
	Limit         int
	After, Before string
}

// DefaultListLimit is the page size of Resend's paged lists (emails,
// webhooks) when the query gives no limit.
const DefaultListLimit = 20

// ParseListWindow reads limit, after and before from a list's query;
// without a limit, the window holds defaultLimit items (0: all of them).
func ParseListWindow(q url.Values, defaultLimit int) (ListWindow, error) {
	var v mailroom.Validator
	w := ListWindow{Limit: defaultLimit}
	for _, name := range []string{"limit", "after", "before"} {
		if n := len(q[name]); n > 1 {
			v.Add(name, "is given %d times; give it once", n)
		}
	}
	if s := q.Get("limit"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 || n > mailroom.MaxPageLimit {
			v.Add("limit", "must be a whole number from 1 to %d", mailroom.MaxPageLimit)
		}
		w.Limit = n
	}
	w.After, w.Before = q.Get("after"), q.Get("before")
	if w.After != "" && w.Before != "" {
		v.Add("before", "cannot be given with after; page one way at a time")
	}
	return w, v.Err()
}

// Select is the window of items (the whole list, newest first, each named
// by id) and whether more lie beyond it in the direction of paging. An
// after or before that names no item of the list is a problem of the
// parameter.
func Select[T any](w ListWindow, items []T, id func(T) string) ([]T, bool, error) {
	from, to := 0, len(items)
	cursor, field := w.After, "after"
	if w.Before != "" {
		cursor, field = w.Before, "before"
	}
	if cursor != "" {
		at := -1
		for i, it := range items {
			if id(it) == cursor {
				at = i
				break
			}
		}
		if at < 0 {
			var v mailroom.Validator
			v.Add(field, "names no item of this list (%q); give the id of one", mailroom.Excerpt(cursor, 64))
			return nil, false, v.Err()
		}
		if w.After != "" {
			from = at + 1
		} else {
			to = at
		}
	}
	if w.Limit == 0 || to-from <= w.Limit {
		return items[from:to], false, nil
	}
	if w.Before != "" {
		return items[to-w.Limit : to], true, nil
	}
	return items[from : from+w.Limit], true, nil
}
