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
		rows, err := tx.QueryContext(ctx, `SELECT id FROM messages m WHERE created_at < $1
			AND NOT EXISTS (SELECT 1 FROM recipients r WHERE r.message_id = m.id AND r.due_at IS NOT NULL)
			ORDER BY created_at LIMIT $2`, micros(cutoff), limit)
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

var _ mailroom.MessageStore = (*Store)(nil)
