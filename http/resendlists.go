package http

import (
	"context"

	"github.com/mailroom/mailroom"
)

// resendListMax bounds what a list on Resend's routes reads of one
// account: Resend pages by an item's id (after, before), which Mailroom's
// cursors are not, so the list is read whole, page by page, and the
// window cut from it (resend.Select). An account has at most 1,000
// domains (mailroom.DefaultMaxDomains); of keys, the newest 1,000 are
// listed, and truncated says more exist.
const resendListMax = 1000

// readWhole reads a list through its pages, newest first, up to
// resendListMax items.
func readWhole[T any](ctx context.Context, page func(context.Context, mailroom.Page) ([]T, string, error)) (items []T, truncated bool, err error) {
	p := mailroom.Page{Limit: mailroom.MaxPageLimit}
	for {
		got, next, err := page(ctx, p)
		if err != nil {
			return nil, false, err
		}
		items = append(items, got...)
		if next == "" {
			return items, false, nil
		}
		if len(items) >= resendListMax {
			return items[:resendListMax], true, nil
		}
		p.Cursor = next
	}
}
