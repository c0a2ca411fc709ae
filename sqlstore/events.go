package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"slices"
	"strconv"
	"strings"

	"github.com/mailroom/mailroom"
)

// insertEvent writes e inside the transaction of the change it describes,
// with its webhook deliveries (fanOut): the event and its outbox rows
// commit or roll back together.
func (s *Store) insertEvent(ctx context.Context, tx *sql.Tx, e *mailroom.Event) error {
	if err := s.insertEventOnly(ctx, tx, e); err != nil {
		return err
	}
	return s.fanOut(ctx, tx, e)
}

// insertEventOnly writes e without deliveries.
func (s *Store) insertEventOnly(ctx context.Context, tx *sql.Tx, e *mailroom.Event) error {
	account, err := s.writtenAccountKey(ctx, tx, e.AccountID)
	if err != nil {
		return err
	}
	_, err = s.txExec(ctx, tx, `INSERT INTO events (`+eventColumns+`)
		VALUES ($1, $2, $3, $4, $5, $6, $7)`, eventRow(e, account)...)
	return s.wrap(err, "insert event")
}

// Event finds one of an account's events, its data completed from its
// message.
func (s *Store) Event(ctx context.Context, accountID, id string) (*mailroom.Event, error) {
	account, err := s.accountKey(ctx, nil, accountID)
	if err != nil {
		return nil, err
	}
	refs := s.accountRefs()
	e, err := refs.scanEventOfMessage(s.readRow(ctx, EventQuery, eventKey(id), account))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, mailroom.Errorf(mailroom.ECodeNotFound, "No event %q.", id)
	}
	if err == nil {
		err = s.resolve(ctx, nil, refs)
	}
	return e, s.wrap(err, "event")
}

// ListEvents lists an account's events, newest first. Event ids sort by
// creation time, so the id alone orders and pages them, and a since bound
// is an id bound too (the smallest id of its millisecond), which keeps the
// scan in the index whatever the filter. Each event's data is completed
// from its message in the same query (withMessages), and the page is put
// back in order here: it is at most a page, and SQLite would sort it with a
// temporary b-tree. The read holds the engine to walking the index in
// order (CustomPlans, as the email log's): without fresh statistics
// PostgreSQL read and sorted all of an account's events for one page.
func (s *Store) ListEvents(ctx context.Context, accountID string, f mailroom.EventFilter, p mailroom.Page) ([]*mailroom.Event, string, error) {
	account, err := s.accountKey(ctx, nil, accountID)
	if err != nil {
		return nil, "", err
	}
	query, args, limit, err := s.EventsQuery(account, f, p)
	if err != nil {
		return nil, "", err
	}
	var out []*mailroom.Event
	err = s.inSnapshot(ctx, func(tx *sql.Tx) error {
		if s.dialect.Reads.CustomPlans != "" {
			if _, err := tx.ExecContext(ctx, s.dialect.Reads.CustomPlans); err != nil {
				return s.wrap(err, "list events")
			}
		}
		rows, err := tx.QueryContext(ctx, query, args...)
		if err != nil {
			return s.wrap(err, "list events")
		}
		refs := s.accountRefs()
		if out, err = collect(rows, refs.scanEventOfMessage); err == nil {
			err = s.resolve(ctx, tx, refs)
		}
		return s.wrap(err, "list events")
	})
	if err != nil {
		return nil, "", err
	}
	slices.SortFunc(out, func(a, b *mailroom.Event) int { return strings.Compare(b.ID, a.ID) })
	out, next := trimPage(out, limit, func(x *mailroom.Event) cursor { return cursor{at: micros(x.CreatedAt), id: x.ID} })
	return out, next, nil
}

// EventsQuery is the statement of ListEvents for f and p among the events
// of the account whose stored key is account, and the page's size. A
// filter by message walks events_by_message (a message has a few events),
// one by type events_by_type, and the others the primary key, (account,
// id): on SQLite, which has no statistics, by INDEXED BY, as without it
// SQLite walked the primary key for a type and read every event of the
// account to find a rare one. email.queued is not in events_by_type
// (migration 00016): every message has one, so its filter walks the
// primary key, where a page's worth is near. Exported for storetest's
// plan check.
func (s *Store) EventsQuery(account any, f mailroom.EventFilter, p mailroom.Page) (query string, args []any, limit int, err error) {
	after, err := parseIDCursor(p.Cursor, mailroom.PrefixEvent)
	if err != nil {
		return "", nil, 0, err
	}
	limit = pageLimit(p)
	where := []string{"account_id = $1"}
	args = []any{account}
	add := func(cond string, v any) {
		args = append(args, v)
		where = append(where, strings.ReplaceAll(cond, "?", "$"+strconv.Itoa(len(args))))
	}
	index := ""
	if after.id != "" {
		add("id < ?", eventKey(after.id))
	}
	if f.Type != "" {
		add("type = ?", f.Type)
		if f.Type != mailroom.EventEmailQueued {
			// events_by_type's own condition, written out so that both
			// planners see the partial index serves the query.
			where = append(where, "type <> '"+mailroom.EventEmailQueued+"'")
			index = "events_by_type"
		}
	}
	if f.MessageID != "" {
		add("message_id = ?", messageKey(f.MessageID))
		index = "events_by_message"
	}
	if f.Since != nil {
		add("id >= ?", timeKey(f.Since.UnixMilli()))
		add("created_at >= ?", micros(*f.Since))
	}
	args = append(args, limit+1)
	return withMessages(`SELECT ` + eventColumns + ` FROM events` + s.dialect.indexedBy(index) + ` WHERE ` + strings.Join(where, " AND ") +
		` ORDER BY id DESC LIMIT $` + strconv.Itoa(len(args))), args, limit, nil
}

// EventQuery is the statement of Event, its parameters the event's key
// and its account's. Exported for storetest's plan check.
var EventQuery = withMessages(`SELECT ` + eventColumns + ` FROM events WHERE id = $1 AND account_id = $2`)

const eventColumns = `id, account_id, type, data, created_at, message_id, recipient`

// scanEvent reads a row of eventColumns.
func (r *accountRefs) scanEvent(row scanner) (*mailroom.Event, error) {
	var e mailroom.Event
	var data string
	var created int64
	var rcpt sql.NullString
	if err := row.Scan(eventColumn(&e.ID), r.column(&e.AccountID), &e.Type, &data, &created, messageColumn(&e.MessageID), &rcpt); err != nil {
		return nil, err
	}
	e.Recipient = rcpt.String
	e.Data = []byte(data)
	e.CreatedAt = fromMicros(created)
	return &e, nil
}

// eventRow is e's values in eventColumns' order; account is the key of
// e's account.
func eventRow(e *mailroom.Event, account int64) []any {
	return eventRowWithData(e, account, storedEventData(e))
}

// eventRowWithData is eventRow with e's data as stored made ahead: the
// accept path makes it in each request's goroutine (newAcceptBatch), not
// in the transaction, which on SQLite is the one writer's.
func eventRowWithData(e *mailroom.Event, account int64, data string) []any {
	var message any
	if e.MessageID != "" {
		message = messageKey(e.MessageID)
	}
	return []any{eventKey(e.ID), account, e.Type, data, micros(e.CreatedAt), message, nullString(e.Recipient)}
}

// nullString stores "" as NULL, so that partial indexes skip it.
func nullString(s string) any {
	if s == "" {
		return nil
	}
	return s
}
