package sqlstore

import (
	"context"
	"database/sql"
	"time"

	"github.com/mailroom/mailroom"
)

// DeleteExpiredMessages removes finished messages created before cutoff,
// oldest first, with their recipients, tags, events and tracked links
// (migration 00028). The children are
// deleted by name: no foreign key cascades to them on PostgreSQL
// (migration 00013) nor to tags on SQLite (00015). A message some
// recipient of which is still queued or deferred is kept until it
// finishes.
func (s *Store) DeleteExpiredMessages(ctx context.Context, cutoff time.Time, limit int) (int, error) {
	n := 0
	err := s.inTx(ctx, func(tx *sql.Tx) error {
		// The oldest first, by the primary key: an id is a ULID of its
		// message's creation millisecond (logKeyBound), so the keys below the
		// cutoff's next millisecond hold every message created before it.
		rows, err := tx.QueryContext(ctx, ExpiredMessagesQuery, micros(cutoff), limit, retentionBound(cutoff))
		if err != nil {
			return s.wrap(err, "find expired messages")
		}
		type expired struct {
			id      []byte
			account int64
			tags    map[string]string
		}
		gone, err := collect(rows, func(r scanner) (expired, error) {
			var x expired
			var envelope string
			if err := r.Scan(&x.id, &x.account, &envelope); err != nil {
				return x, err
			}
			var m mailroom.Message
			err := decodeEnvelope(envelope, &m)
			x.tags = m.Tags
			return x, err
		})
		if err != nil {
			return s.wrap(err, "find expired messages")
		}
		for _, x := range gone {
			for _, child := range []string{"events", "recipients", "message_links"} {
				if _, err := tx.ExecContext(ctx, `DELETE FROM `+child+` WHERE message_id = $1`, x.id); err != nil {
					return s.wrap(err, "delete "+child)
				}
			}
			// A message's tag rows, found by its envelope's tags: the
			// table is keyed by tag, not by message (migration 00015).
			for k, v := range x.tags {
				if _, err := tx.ExecContext(ctx, `DELETE FROM message_tags
					WHERE account_id = $1 AND key = $2 AND value = $3 AND message_id = $4`, x.account, k, v, x.id); err != nil {
					return s.wrap(err, "delete message_tags")
				}
			}
			if _, err := tx.ExecContext(ctx, `DELETE FROM messages WHERE id = $1`, x.id); err != nil {
				return s.wrap(err, "delete message")
			}
		}
		n = len(gone)
		return nil
	})
	return n, err
}

// ExpiredMessagesQuery finds the messages retention removes, their key,
// account key and envelope: created before $1 (microseconds), with no
// recipient due, at most $2, below the key $3 (retentionBound), oldest
// first. Exported for storetest's plan check.
const ExpiredMessagesQuery = `SELECT id, account_id, envelope FROM messages m WHERE id < $3 AND created_at < $1
	AND NOT EXISTS (SELECT 1 FROM recipients r WHERE r.message_id = m.id AND r.due_at IS NOT NULL)
	ORDER BY id LIMIT $2`

// retentionBound is a key above every message created before cutoff.
func retentionBound(cutoff time.Time) []byte { return logKeyBound(micros(cutoff), 1) }

var _ mailroom.MessageStore = (*Store)(nil)
