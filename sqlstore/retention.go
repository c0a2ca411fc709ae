package sqlstore

import (
	"context"
	"database/sql"
	"time"

	"github.com/mailroom/mailroom"
)

// DeleteExpiredMessages removes finished messages created before cutoff,
// oldest first, with their recipients, tags and events. The children are
// deleted by name: on PostgreSQL no foreign key cascades to them
// (migration 00013). A
// message some recipient of which is still queued or deferred is kept
// until it finishes.
func (s *Store) DeleteExpiredMessages(ctx context.Context, cutoff time.Time, limit int) (int, error) {
	n := 0
	err := s.inTx(ctx, func(tx *sql.Tx) error {
		// The oldest first, by the primary key: an id is a ULID of its
		// message's creation millisecond (logIDBound), so the ids below the
		// cutoff's next millisecond hold every message created before it.
		rows, err := tx.QueryContext(ctx, ExpiredMessagesQuery, micros(cutoff), limit, retentionBound(cutoff))
		if err != nil {
			return s.wrap(err, "find expired messages")
		}
		ids, err := collect(rows, func(r scanner) (string, error) {
			var id string
			return id, r.Scan(&id)
		})
		if err != nil {
			return s.wrap(err, "find expired messages")
		}
		for _, id := range ids {
			for _, child := range []string{"events", "recipients", "message_tags"} {
				if _, err := tx.ExecContext(ctx, `DELETE FROM `+child+` WHERE message_id = $1`, id); err != nil {
					return s.wrap(err, "delete "+child)
				}
			}
			if _, err := tx.ExecContext(ctx, `DELETE FROM messages WHERE id = $1`, id); err != nil {
				return s.wrap(err, "delete message")
			}
		}
		n = len(ids)
		return nil
	})
	return n, err
}

// ExpiredMessagesQuery finds the messages retention removes: created
// before $1 (microseconds), with no recipient due, at most $2, below the id
// $3 (retentionBound), oldest first. Exported for storetest's plan check.
const ExpiredMessagesQuery = `SELECT id FROM messages m WHERE id < $3 AND created_at < $1
	AND NOT EXISTS (SELECT 1 FROM recipients r WHERE r.message_id = m.id AND r.due_at IS NOT NULL)
	ORDER BY id LIMIT $2`

// retentionBound is an id above every message created before cutoff.
func retentionBound(cutoff time.Time) string {
	if b := logIDBound(micros(cutoff), 1); b != "" {
		return b
	}
	return mailroom.PrefixMessage + "~" // after the year 10889: above every id
}

var _ mailroom.MessageStore = (*Store)(nil)
