package sqlstore

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/mailroom/mailroom"
)

const queuedColumns = `r.message_id, r.address, r.kind, r.status, r.attempts, r.queued_at, r.due_at,
	m.account_id, m.from_address, m.subject, m.domain, m.content, m.created_at`

// ClaimDueRecipients leases due recipients by pushing due_at forward to the
// end of the lease before anything is dialled (as mox does): a node that
// dies mid-delivery leaves them due again when the lease ends, and a crash
// can never make a recipient hot-loop.
//
// Claims take whole messages: all due recipients of a message go to one
// worker, so that the recipients of one domain share one SMTP transaction.
// On PostgreSQL the message rows are locked with SKIP LOCKED, so nodes and
// workers claim side by side without ever splitting a message.
func (s *Store) ClaimDueRecipients(ctx context.Context, now time.Time, lease time.Duration, limit int) ([]*mailroom.QueuedRecipient, error) {
	var out []*mailroom.QueuedRecipient
	leaseEnd := micros(now.Add(lease))
	err := s.inTx(ctx, func(tx *sql.Tx) error {
		// Three statements a batch, whatever its size: on PostgreSQL each
		// is a round trip.
		rows, err := s.txQuery(ctx, tx, `SELECT id FROM messages WHERE id IN (
			SELECT message_id FROM recipients WHERE due_at <= $1 ORDER BY due_at LIMIT $2) LIMIT $3`+s.engine.SkipLocked,
			micros(now), 4*limit, limit)
		if err != nil {
			return s.wrap(err, "claim messages")
		}
		ids, err := collect(rows, func(r scanner) (any, error) {
			var id string
			return id, r.Scan(&id)
		})
		if err != nil || len(ids) == 0 {
			return s.wrap(err, "claim messages")
		}
		args := append([]any{micros(now), leaseEnd}, ids...)
		rows, err = tx.QueryContext(ctx, `UPDATE recipients SET due_at = $2
			WHERE due_at <= $1 AND message_id IN (`+placeholders(3, len(ids))+`) RETURNING message_id`, args...)
		if err != nil {
			return s.wrap(err, "claim recipients")
		}
		// Only the messages this UPDATE claimed rows of: a message another
		// worker claimed a moment ago (when its lock was released between
		// our SELECT and UPDATE) has no row left due here, and its rows
		// may carry the same lease end as ours.
		claimed, err := collect(rows, func(r scanner) (string, error) {
			var id string
			return id, r.Scan(&id)
		})
		if err != nil || len(claimed) == 0 {
			return s.wrap(err, "claim recipients")
		}
		args = []any{leaseEnd}
		for _, id := range slices.Compact(slices.Sorted(slices.Values(claimed))) {
			args = append(args, id)
		}
		rows, err = tx.QueryContext(ctx, `SELECT `+queuedColumns+` FROM recipients r JOIN messages m ON m.id = r.message_id
			WHERE r.due_at = $1 AND r.message_id IN (`+placeholders(2, len(args)-1)+`) ORDER BY r.message_id, r.position`,
			args...)
		if err != nil {
			return s.wrap(err, "read claimed recipients")
		}
		out, err = collect(rows, scanQueued)
		return s.wrap(err, "read claimed recipients")
	})
	return out, err
}

// placeholders returns "$first, …" for n arguments.
func placeholders(first, n int) string {
	var b strings.Builder
	for i := range n {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "$%d", first+i)
	}
	return b.String()
}

func scanQueued(row scanner) (*mailroom.QueuedRecipient, error) {
	q := &mailroom.QueuedRecipient{Message: &mailroom.MessageSummary{}}
	var kind, status, content string
	var queued, lease, created int64
	if err := row.Scan(&q.MessageID, &q.Address, &kind, &status, &q.Attempts, &queued, &lease,
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
	q.QueuedAt, q.LeaseUntil = fromMicros(queued), fromMicros(lease)
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
// returns the bytes that are stored: those are the ones to send. It shares
// commits with other writes (group commit).
func (s *Store) SaveRaw(ctx context.Context, id string, raw []byte) ([]byte, error) {
	var stored []byte
	err := s.committer.do(ctx, func(ctx context.Context, tx *sql.Tx) error {
		if _, err := s.txExec(ctx, tx, `UPDATE messages SET raw = $2 WHERE id = $1 AND raw IS NULL`, id, raw); err != nil {
			return s.wrap(err, "save raw")
		}
		return s.wrap(s.txQueryRow(ctx, tx, `SELECT raw FROM messages WHERE id = $1`, id).Scan(&stored), "save raw")
	})
	return stored, err
}

// RecordAttempts stores attempts' outcomes and re-derives their messages'
// statuses, all in one transaction, shared with other concurrent writes
// (group commit): each delivery records its outcome as soon as its SMTP
// exchange ends, without paying a commit of its own.
func (s *Store) RecordAttempts(ctx context.Context, attempts []*mailroom.Attempt) error {
	return s.committer.do(ctx, func(ctx context.Context, tx *sql.Tx) error {
		// Two deliveries of one message (to two domains) may record at
		// once. Each re-derives the message's status from all its
		// recipients, so each must see the other's: lock the messages
		// first, in id order (so that two transactions cannot deadlock on
		// them). SQLite's single writer needs no lock.
		if err := s.lockMessages(ctx, tx, attempts); err != nil {
			return err
		}
		touched := map[string]bool{}
		for _, a := range attempts {
			r := a.Recipient
			var code any
			if r.SMTPCode != 0 {
				code = r.SMTPCode
			}
			res, err := s.txExec(ctx, tx, `UPDATE recipients SET status = $3, attempts = $4, last_attempt_at = $5,
				next_attempt_at = $6, smtp_code = $7, smtp_response = $8, mx = $9, due_at = $10
				WHERE message_id = $1 AND address = $2 AND due_at = $11`,
				r.MessageID, r.Address, string(r.Status), r.Attempts, microsOrNil(r.LastAttemptAt),
				microsOrNil(r.NextAttemptAt), code, r.SMTPResponse, r.MX, microsOrNil(a.DueAt), micros(a.LeaseUntil))
			if err != nil {
				return s.wrap(err, "record attempt")
			}
			if n, _ := res.RowsAffected(); n == 0 {
				continue // the claim was superseded: its outcome is not the recipient's any more
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

func (s *Store) lockMessages(ctx context.Context, tx *sql.Tx, attempts []*mailroom.Attempt) error {
	if s.engine.LockRows == "" {
		return nil
	}
	ids := map[string]bool{}
	for _, a := range attempts {
		ids[a.Recipient.MessageID] = true
	}
	for _, id := range slices.Sorted(maps.Keys(ids)) {
		var got string
		if err := s.txQueryRow(ctx, tx, `SELECT id FROM messages WHERE id = $1`+s.engine.LockRows, id).Scan(&got); err != nil {
			return s.wrap(err, "lock message")
		}
	}
	return nil
}

// rederiveStatus sets a message's status from its recipients' (API.md §6).
func (s *Store) rederiveStatus(ctx context.Context, tx *sql.Tx, messageID string) error {
	rows, err := s.txQuery(ctx, tx, `SELECT status FROM recipients WHERE message_id = $1`, messageID)
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
	_, err = s.txExec(ctx, tx, `UPDATE messages SET status = $2 WHERE id = $1`,
		messageID, string(mailroom.DeriveMessageStatus(states)))
	return s.wrap(err, "derive status")
}
