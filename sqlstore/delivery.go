package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/mailroom/mailroom"
)

// queuedColumns are what delivery needs of a claimed recipient: besides
// its message, the MX host, site and deferral reason of its last attempt,
// which a greylisted recipient's retry goes back to (mailroom.Delivery's
// PreferMX, FirstAttempt; mailroom.NewAttempt).
const queuedColumns = `r.message_id, r.address, r.kind, r.status, r.attempts, r.queued_at, r.mx, r.site, r.last_deferral_reason,
	m.account_id, m.from_address, m.subject, m.domain, m.created_at, m.require_tls, m.track_opens, m.track_clicks, m.category`

// claimable is the condition on recipients r that a claim may take: due,
// and held by no claim. It is the partial index recipients_due's own
// condition, so that a claim reads only claimable rows, never the ones in
// flight. Claims whose node died or whose lease ran out are released by
// ReleaseLostClaims.
const claimable = `r.due_at <= $1 AND r.claim_token IS NULL`

// ClaimDueRecipients claims the due recipients of whole messages under one
// new token, recording the claiming node and the lease's end in the
// database's clock; due_at is left alone, so that it keeps meaning "next
// due" (a scheduled send can be told from one being sent).
//
// On PostgreSQL the message rows are locked with SKIP LOCKED, so nodes and
// workers claim side by side without ever splitting a message. Neither the
// message's content nor its signed bytes are read: a claim is bounded by
// the number of recipients, not by the size of their mail.
func (s *Store) ClaimDueRecipients(ctx context.Context, c mailroom.Claim) ([]*mailroom.QueuedRecipient, error) {
	var out []*mailroom.QueuedRecipient
	token := mailroom.NewID(mailroom.PrefixClaim, c.Now)
	dbNow := s.dialect.SQL.NowMicros
	cond := claimable
	// The busy domains are the last parameters of both statements that
	// use cond ($1 is the due time, then two of their own), so that the
	// text varies only with their number and prepared statements are
	// reused.
	skip := make([]any, len(c.SkipDomains))
	for i, d := range c.SkipDomains {
		skip[i] = d
	}
	if len(skip) > 0 {
		cond += " AND " + s.dialect.SQL.DomainOf("r.address") + " NOT IN (" + placeholders(4, len(skip)) + ")"
	}
	err := s.inTx(ctx, func(tx *sql.Tx) error {
		out = nil
		// Four statements a batch, whatever its size: on PostgreSQL each
		// is a round trip.
		rows, err := s.txQuery(ctx, tx, `SELECT id FROM messages WHERE id IN (
			SELECT r.message_id FROM recipients r WHERE `+cond+` ORDER BY r.due_at LIMIT $2) LIMIT $3`+s.dialect.Locks.SkipLocked,
			append([]any{micros(c.Now), 4 * c.Limit, c.Limit}, skip...)...)
		if err != nil {
			return s.wrap(err, "claim messages")
		}
		ids, err := collect(rows, func(r scanner) (any, error) {
			var key []byte
			return key, r.Scan(&key)
		})
		if err != nil || len(ids) == 0 {
			return s.wrap(err, "claim messages")
		}
		args := append(append([]any{micros(c.Now), c.Node, token}, skip...), c.Lease.Microseconds())
		lease := len(args)
		args = append(args, ids...)
		rows, err = tx.QueryContext(ctx, `UPDATE recipients AS r SET claim_node = $2, claim_token = $3, lease_until = `+dbNow+
			fmt.Sprintf(" + $%d", lease)+` WHERE `+cond+` AND r.message_id IN (`+placeholders(lease+1, len(ids))+`) RETURNING message_id`, args...)
		if err != nil {
			return s.wrap(err, "claim recipients")
		}
		// Only the messages this UPDATE claimed rows of: another worker may
		// have claimed one a moment ago (when its lock was released
		// between our SELECT and UPDATE).
		claimed, err := collect(rows, func(r scanner) (string, error) {
			var key []byte
			return string(key), r.Scan(&key)
		})
		if err != nil || len(claimed) == 0 {
			return s.wrap(err, "claim recipients")
		}
		args = []any{token}
		for _, key := range slices.Compact(slices.Sorted(slices.Values(claimed))) {
			args = append(args, []byte(key))
		}
		in := placeholders(2, len(args)-1)
		rows, err = tx.QueryContext(ctx, `SELECT `+queuedColumns+` FROM recipients r JOIN messages m ON m.id = r.message_id
			WHERE r.claim_token = $1 AND r.message_id IN (`+in+`) ORDER BY r.message_id, r.position`, args...)
		if err != nil {
			return s.wrap(err, "read claimed recipients")
		}
		refs := s.accountRefs()
		if out, err = collect(rows, refs.scanQueued); err != nil {
			return s.wrap(err, "read claimed recipients")
		}
		if err := s.resolve(ctx, tx, refs); err != nil {
			return err
		}
		tags, err := s.tagsOf(ctx, tx, args[1:])
		if err != nil {
			return err
		}
		// One summary per message, shared by its recipients.
		byID := map[string]*mailroom.MessageSummary{}
		for _, q := range out {
			if m := byID[q.MessageID]; m != nil {
				q.Message = m
				continue
			}
			q.Message.Tags = tags[q.MessageID]
			byID[q.MessageID] = q.Message
		}
		for _, q := range out {
			q.ClaimToken = token
		}
		out, err = s.startScheduled(ctx, tx, out, c.Now)
		return err
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

func (r *accountRefs) scanQueued(row scanner) (*mailroom.QueuedRecipient, error) {
	q := &mailroom.QueuedRecipient{Message: &mailroom.MessageSummary{}}
	var kind, status, reason, category string
	var mx sql.NullString
	var queued, created int64
	if err := row.Scan(messageColumn(&q.MessageID), &q.Address, &kind, &status, &q.Attempts, &queued, &mx, &q.Site, &reason,
		r.column(&q.Message.AccountID), &q.Message.From, &q.Message.Subject, &q.Message.Domain, &created,
		&q.Message.RequireTLS, &q.Message.Tracking.Opens, &q.Message.Tracking.Clicks, &category); err != nil {
		return nil, err
	}
	q.Kind, q.Status = mailroom.RecipientKind(kind), mailroom.RecipientStatus(status)
	q.MX, q.LastDeferralReason = mx.String, mailroom.DeferralReason(reason)
	q.QueuedAt = fromMicros(queued)
	q.Message.ID, q.Message.CreatedAt = q.MessageID, fromMicros(created)
	q.Message.Category = mailroom.Category(category)
	return q, nil
}

// ReleaseClaims hands recipients back unattempted, in one transaction
// shared with other writes.
func (s *Store) ReleaseClaims(ctx context.Context, token string, recipients []*mailroom.QueuedRecipient, dueAt *time.Time) error {
	if len(recipients) == 0 {
		return nil
	}
	return s.committer.do(ctx, func(ctx context.Context, tx *sql.Tx) error {
		for _, q := range recipients {
			if _, err := s.txExec(ctx, tx, `UPDATE recipients SET claim_node = NULL, claim_token = NULL, lease_until = NULL,
				due_at = COALESCE($4, due_at) WHERE message_id = $1 AND address = $2 AND claim_token = $3`,
				messageKey(q.MessageID), q.Address, token, microsOrNil(dueAt)); err != nil {
				return s.wrap(err, "release claim")
			}
		}
		return nil
	}, messageLocks(recipients)...)
}

// MessageForDelivery returns a message's stored signed bytes, or, when
// there are none yet, its content: a retry reads only what it sends, never
// the request's JSON with its base64 attachments as well.
func (s *Store) MessageForDelivery(ctx context.Context, id string) (*mailroom.Message, []byte, error) {
	var raw []byte
	err := s.readRow(ctx, `SELECT raw FROM messages WHERE id = $1`, messageKey(id)).Scan(&raw)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil, mailroom.Errorf(mailroom.ECodeNotFound, "No message %q.", id)
	}
	if err != nil || raw != nil {
		return nil, raw, s.wrap(err, "message for delivery")
	}
	m, raw, err := s.messageRow(ctx, `WHERE id = $1`, messageKey(id))
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
		res, err := s.txExec(ctx, tx, `UPDATE messages SET raw = $2 WHERE id = $1 AND raw IS NULL`, messageKey(id), raw)
		if err != nil {
			return s.wrap(err, "save raw")
		}
		if n, _ := res.RowsAffected(); n == 1 {
			stored = raw // ours are the stored bytes: no need to read them back
			return nil
		}
		return s.wrap(s.txQueryRow(ctx, tx, `SELECT raw FROM messages WHERE id = $1`, messageKey(id)).Scan(&stored), "save raw")
	}, id)
	return stored, err
}

// RecordAttempts stores attempts' outcomes and re-derives their messages'
// statuses, all in one transaction, shared with other concurrent writes
// (group commit): each delivery records its outcome as soon as its SMTP
// exchange ends, without paying a commit of its own. Two deliveries of one
// message (to two domains) may record at once; each re-derives the
// message's status from all its recipients, so each must see the other's:
// the committer locks their messages first.
func (s *Store) RecordAttempts(ctx context.Context, attempts []*mailroom.Attempt) error {
	return s.committer.do(ctx, func(ctx context.Context, tx *sql.Tx) error {
		touched := map[string]bool{}
		for _, a := range attempts {
			r := a.Recipient
			tls, err := tlsColumn(r.TLS)
			if err != nil {
				return err
			}
			var code any
			if r.SMTPCode != 0 {
				code = r.SMTPCode
			}
			res, err := s.txExec(ctx, tx, `UPDATE recipients SET status = $3, attempts = $4, last_attempt_at = $5,
				next_attempt_at = $6, smtp_code = $7, smtp_response = $8, mx = $9, due_at = $10, unencrypted = $12,
				site = $13, last_deferral_reason = $14, tls = $15, claim_node = NULL, claim_token = NULL, lease_until = NULL
				WHERE message_id = $1 AND address = $2 AND claim_token = $11`,
				messageKey(r.MessageID), r.Address, string(r.Status), r.Attempts, microsOrNil(r.LastAttemptAt),
				microsOrNil(r.NextAttemptAt), code, r.SMTPResponse, r.MX, microsOrNil(a.DueAt), a.ClaimToken, r.Unencrypted,
				r.Site, string(r.LastDeferralReason), tls)
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
	}, attemptLocks(attempts)...)
}

// messageLocks lists the messages of recipients, for the committer's
// global lock order.
func messageLocks(recipients []*mailroom.QueuedRecipient) []string {
	ids := make([]string, len(recipients))
	for i, q := range recipients {
		ids[i] = q.MessageID
	}
	return ids
}

func attemptLocks(attempts []*mailroom.Attempt) []string {
	ids := make([]string, len(attempts))
	for i, a := range attempts {
		ids[i] = a.Recipient.MessageID
	}
	return ids
}

// rederiveStatus sets a message's status from its recipients' (docs/api.md "The email log").
func (s *Store) rederiveStatus(ctx context.Context, tx *sql.Tx, messageID string) error {
	rows, err := s.txQuery(ctx, tx, `SELECT status FROM recipients WHERE message_id = $1`, messageKey(messageID))
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
		messageKey(messageID), string(mailroom.DeriveMessageStatus(states)))
	return s.wrap(err, "derive status")
}
