package sqlstore

import (
	"context"
	"database/sql"

	"github.com/mailroom/mailroom"
)

// insertEvent writes e inside the transaction of the change it describes.
func (s *Store) insertEvent(ctx context.Context, tx *sql.Tx, e *mailroom.Event) error {
	_, err := s.txExec(ctx, tx, `INSERT INTO events (`+eventColumns+`)
		VALUES ($1, $2, $3, $4, $5, $6, $7)`, e.ID, e.AccountID, e.Type, string(e.Data), micros(e.CreatedAt),
		nullString(e.MessageID), nullString(e.Recipient))
	return s.wrap(err, "insert event")
}

// ListEvents lists an account's events, newest first. Event ids sort by
// creation time, so the id alone orders and pages them.
func (s *Store) ListEvents(ctx context.Context, accountID string, f mailroom.EventFilter, p mailroom.Page) ([]*mailroom.Event, string, error) {
	after, err := parseCursor(p.Cursor)
	if err != nil {
		return nil, "", err
	}
	limit := pageLimit(p)
	rows, err := s.read.QueryContext(ctx, `SELECT `+eventColumns+` FROM events
		WHERE account_id = $1 AND ($2 = '' OR id < $2) ORDER BY id DESC LIMIT $3`, accountID, after.id, limit+1)
	if err != nil {
		return nil, "", s.wrap(err, "list events")
	}
	out, err := collect(rows, scanEvent)
	if err != nil {
		return nil, "", s.wrap(err, "list events")
	}
	out, next := trimPage(out, limit, func(x *mailroom.Event) cursor { return cursor{at: micros(x.CreatedAt), id: x.ID} })
	return out, next, nil
}

const eventColumns = `id, account_id, type, data, created_at, message_id, recipient`

func scanEvent(row scanner) (*mailroom.Event, error) {
	var e mailroom.Event
	var data string
	var created int64
	var msg, rcpt sql.NullString
	if err := row.Scan(&e.ID, &e.AccountID, &e.Type, &data, &created, &msg, &rcpt); err != nil {
		return nil, err
	}
	e.MessageID, e.Recipient = msg.String, rcpt.String
	e.Data = []byte(data)
	e.CreatedAt = fromMicros(created)
	return &e, nil
}

// nullString stores "" as NULL, so that partial indexes skip it.
func nullString(s string) any {
	if s == "" {
		return nil
	}
	return s
}
