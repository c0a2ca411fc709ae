package sqlstore

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/mailroom/mailroom"
)

const queuedColumns = `r.message_id, r.address, r.kind, r.status, r.attempts, r.queued_at,
	m.account_id, m.from_address, m.subject, m.domain, m.content, m.created_at`

// ClaimDueRecipients leases due recipients by pushing due_at forward to the
// end of the lease before anything is dialled (as mox does): a node that
// dies mid-delivery leaves them due again when the lease ends, and a crash
// can never make a recipient hot-loop. On PostgreSQL, SKIP LOCKED lets
// nodes claim side by side.
func (s *Store) ClaimDueRecipients(ctx context.Context, now time.Time, lease time.Duration, limit int) ([]*mailroom.QueuedRecipient, error) {
	var out []*mailroom.QueuedRecipient
	err := s.inTx(ctx, func(tx *sql.Tx) error {
		rows, err := tx.QueryContext(ctx, fmt.Sprintf(`UPDATE recipients SET due_at = $2
			WHERE (message_id, address) IN (SELECT message_id, address FROM recipients
				WHERE due_at <= $1 ORDER BY due_at LIMIT $3 %s)
			RETURNING message_id, address`, s.engine.SkipLocked), micros(now), micros(now.Add(lease)), limit)
		if err != nil {
			return s.wrap(err, "claim recipients")
		}
		type key struct{ msg, addr string }
		var keys []key
		for rows.Next() {
			var k key
			if err := rows.Scan(&k.msg, &k.addr); err != nil {
				rows.Close()
				return s.wrap(err, "claim recipients")
			}
			keys = append(keys, k)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return s.wrap(err, "claim recipients")
		}
		for _, k := range keys {
			q, err := scanQueued(tx.QueryRowContext(ctx, `SELECT `+queuedColumns+` FROM recipients r
				JOIN messages m ON m.id = r.message_id WHERE r.message_id = $1 AND r.address = $2`, k.msg, k.addr))
			if err != nil {
				return s.wrap(err, "read claimed recipient")
			}
			out = append(out, q)
		}
		return nil
	})
	return out, err
}

func scanQueued(row scanner) (*mailroom.QueuedRecipient, error) {
	q := &mailroom.QueuedRecipient{Message: &mailroom.MessageSummary{}}
	var kind, status, content string
	var queued, created int64
	if err := row.Scan(&q.MessageID, &q.Address, &kind, &status, &q.Attempts, &queued,
		&q.Message.AccountID, &q.Message.From, &q.Message.Subject, &q.Message.Domain, &content, &created); err != nil {
		return nil, err
	}
	var c struct {
		Tags map[string]string `json:"tags"`
	}
	if err := json.Unmarshal([]byte(content), &c); err != nil {
		return nil, err
	}
	q.Kind, q.Status = mailroom.RecipientKind(kind), mailroom.RecipientStatus(status)
	q.QueuedAt = fromMicros(queued)
	q.Message.ID, q.Message.Tags, q.Message.CreatedAt = q.MessageID, c.Tags, fromMicros(created)
	return q, nil
}

// MessageForDelivery returns a message's content and stored signed bytes.
func (s *Store) MessageForDelivery(ctx context.Context, id string) (*mailroom.Message, []byte, error) {
	m, raw, err := s.messageRow(ctx, s.read, `WHERE id = $1`, id)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil, mailroom.Errorf(mailroom.ECodeNotFound, "No message %q.", id)
	}
	return m, raw, s.wrap(err, "message for delivery")
}

// SaveRaw stores the signed bytes unless some are stored already, and
// returns the bytes that are stored: those are the ones to send.
func (s *Store) SaveRaw(ctx context.Context, id string, raw []byte) ([]byte, error) {
	var stored []byte
	err := s.inTx(ctx, func(tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, `UPDATE messages SET raw = $2 WHERE id = $1 AND raw IS NULL`, id, raw); err != nil {
			return s.wrap(err, "save raw")
		}
		return s.wrap(tx.QueryRowContext(ctx, `SELECT raw FROM messages WHERE id = $1`, id).Scan(&stored), "save raw")
	})
	return stored, err
}

// RecordAttempts stores attempts' outcomes and re-derives their messages'
// statuses, all in one transaction.
func (s *Store) RecordAttempts(ctx context.Context, attempts []*mailroom.Attempt) error {
	return s.inTx(ctx, func(tx *sql.Tx) error {
		touched := map[string]bool{}
		for _, a := range attempts {
			r := a.Recipient
			var code any
			if r.SMTPCode != 0 {
				code = r.SMTPCode
			}
			if _, err := tx.ExecContext(ctx, `UPDATE recipients SET status = $3, attempts = $4, last_attempt_at = $5,
				next_attempt_at = $6, smtp_code = $7, smtp_response = $8, mx = $9, due_at = $10
				WHERE message_id = $1 AND address = $2`,
				r.MessageID, r.Address, string(r.Status), r.Attempts, microsOrNil(r.LastAttemptAt),
				microsOrNil(r.NextAttemptAt), code, r.SMTPResponse, r.MX, microsOrNil(a.DueAt)); err != nil {
				return s.wrap(err, "record attempt")
			}
			if a.Event != nil {
				if err := s.insertEvent(ctx, tx, a.Event); err != nil {
					return err
				}
			}
			if a.Suppress != nil {
				if _, err := s.addSuppression(ctx, tx, a.Suppress); err != nil {
					return err
				}
			}
			touched[r.MessageID] = true
		}
		for id := range touched {
			if err := s.rederiveStatus(ctx, tx, id); err != nil {
				return err
			}
		}
		return nil
	})
}

// rederiveStatus sets a message's status from its recipients' (API.md §6).
func (s *Store) rederiveStatus(ctx context.Context, tx *sql.Tx, messageID string) error {
	rows, err := tx.QueryContext(ctx, `SELECT status FROM recipients WHERE message_id = $1`, messageID)
	if err != nil {
		return s.wrap(err, "derive status")
	}
	var states []mailroom.RecipientStatus
	for rows.Next() {
		var st string
		if err := rows.Scan(&st); err != nil {
			rows.Close()
			return s.wrap(err, "derive status")
		}
		states = append(states, mailroom.RecipientStatus(st))
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return s.wrap(err, "derive status")
	}
	_, err = tx.ExecContext(ctx, `UPDATE messages SET status = $2 WHERE id = $1`,
		messageID, string(mailroom.DeriveMessageStatus(states)))
	return s.wrap(err, "derive status")
}
