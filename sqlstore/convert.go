package sqlstore

import (
	"database/sql"
	"encoding/base64"
	"strconv"
	"strings"
	"time"

	"github.com/mailroom/mailroom"
)

// Times are stored as microseconds since the Unix epoch (UTC): one integer
// type that SQLite and PostgreSQL compare, index and sort the same way.

func micros(t time.Time) int64 { return t.UnixMicro() }

func microsOrNil(t *time.Time) any {
	if t == nil {
		return nil
	}
	return t.UnixMicro()
}

func fromMicros(v int64) time.Time { return time.UnixMicro(v).UTC() }

func fromNullMicros(v sql.NullInt64) *time.Time {
	if !v.Valid {
		return nil
	}
	t := fromMicros(v.Int64)
	return &t
}

// A cursor is the sort key of the last item of a page, base64url-encoded so
// that clients treat it as opaque. Lists are ordered newest first by
// (created_at, id), and "after the cursor" means strictly older, so items
// created while a client pages do not shift the pages it has not read yet.
type cursor struct {
	at int64
	id string
}

func (c cursor) String() string {
	return base64.RawURLEncoding.EncodeToString([]byte(strconv.FormatInt(c.at, 10) + "." + c.id))
}

func parseCursor(s string) (cursor, error) {
	if s == "" {
		return cursor{at: 1<<63 - 1}, nil
	}
	invalid := invalidCursor()
	raw, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil {
		return cursor{}, invalid
	}
	at, id, ok := strings.Cut(string(raw), ".")
	n, err := strconv.ParseInt(at, 10, 64)
	if !ok || err != nil || id == "" {
		return cursor{}, invalid
	}
	return cursor{at: n, id: id}, nil
}

// parseIDCursor is parseCursor for a list ordered by ids of prefix's
// kind: a cursor whose id is not one (forged, with its digest made again)
// is refused, as one this API did not return, rather than start the list
// over from a key no id has.
func parseIDCursor(s, prefix string) (cursor, error) {
	c, err := parseCursor(s)
	if err == nil && s != "" && !mailroom.IsID(c.id, prefix) {
		return cursor{}, invalidCursor()
	}
	return c, err
}

func invalidCursor() error {
	invalid := mailroom.Errorf(mailroom.ECodeValidation, "cursor: not a cursor this API returned")
	invalid.Details = []mailroom.FieldError{{Field: "cursor", Message: "not a cursor this API returned"}}
	return invalid
}

// pageLimit returns the limit to query: one more than asked, to learn
// whether a next page exists without a second query.
func pageLimit(p mailroom.Page) int {
	n := p.Limit
	if n <= 0 {
		n = mailroom.DefaultPageLimit
	}
	return min(n, mailroom.MaxPageLimit)
}

// trimPage cuts items (queried with pageLimit+1) to limit and returns the
// cursor of the next page, "" when there is none.
func trimPage[T any](items []T, limit int, key func(T) cursor) ([]T, string) {
	if len(items) <= limit {
		return items, ""
	}
	items = items[:limit]
	return items, key(items[limit-1]).String()
}

// boolInt is b as the 0 or 1 of an INTEGER column, which both engines
// compare alike (domains.receiving).
func boolInt(b bool) int64 {
	if b {
		return 1
	}
	return 0
}
