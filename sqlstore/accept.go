package sqlstore

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"strconv"
	"strings"

	"github.com/mailroom/mailroom"
)

// AcceptMessage stores m through the group committer: concurrent accepts
// share one transaction and one fsync, and each is answered after that
// commit (docs/design.md "How a message travels").
func (s *Store) AcceptMessage(ctx context.Context, m *mailroom.Message) (mailroom.AcceptResult, error) {
	var res mailroom.AcceptResult
	var reused error
	err := s.committer.do(ctx, func(ctx context.Context, tx *sql.Tx) error {
		// The job may run twice (alone, after its batch failed): each run
		// starts from nothing.
		var err error
		reused = nil
		res, err = s.acceptOne(ctx, tx, m)
		if mailroom.IsCode(err, mailroom.ECodeIdempotencyKeyReused) {
			// An answer, not a failure: it must not abort the batch.
			reused, err = err, nil
		}
		return err
	})
	if err == nil {
		err = reused
	}
	return res, err
}

// acceptOne writes one message inside tx: the idempotency check, the
// message, its recipients, tags and first events. A reused idempotency key
// is returned as an error value that does not abort tx.
func (s *Store) acceptOne(ctx context.Context, tx *sql.Tx, m *mailroom.Message) (mailroom.AcceptResult, error) {
	suppressed, err := s.suppressedAmong(ctx, tx, m)
	if err != nil {
		return mailroom.AcceptResult{}, err
	}
	due := m.CreatedAt
	firstState, firstEvent := mailroom.RecipientQueued, mailroom.EventEmailQueued
	if m.ScheduledAt != nil {
		due, firstState, firstEvent = *m.ScheduledAt, mailroom.RecipientScheduled, mailroom.EventEmailScheduled
	}
	states := make([]mailroom.RecipientStatus, len(m.Recipients))
	for i, r := range m.Recipients {
		r.MessageID = m.ID
		r.Status = firstState
		if suppressed[mailroom.AddressKey(r.Address)] {
			r.Status = mailroom.RecipientSuppressed
		}
		states[i] = r.Status
	}
	m.Status = mailroom.DeriveMessageStatus(states)

	content, err := encodeContent(m)
	if err != nil {
		return mailroom.AcceptResult{}, err
	}
	// The envelope repeats content's addresses and tags apart, for the
	// email log, which must not read content (migration 00006).
	envelope, err := encodeEnvelope(m)
	if err != nil {
		return mailroom.AcceptResult{}, err
	}
	var key any
	if m.IdempotencyKey != "" {
		key = m.IdempotencyKey
	}
	var templateID, templateName any
	if m.Template != nil {
		templateID, templateName = m.Template.ID, m.Template.Name
	}
	res, err := s.txExec(ctx, tx, `INSERT INTO messages (id, account_id, status, from_address, subject, category,
		domain, idempotency_key, request_digest, content, envelope, created_at, scheduled_at, template_id, template_name)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15)
		ON CONFLICT (account_id, idempotency_key) WHERE idempotency_key IS NOT NULL DO NOTHING`,
		m.ID, m.AccountID, string(m.Status), m.From.Address, m.Subject, string(m.Category), m.Domain,
		key, m.RequestDigest, content, envelope, micros(m.CreatedAt), microsOrNil(m.ScheduledAt), templateID, templateName)
	if err != nil {
		return mailroom.AcceptResult{}, s.wrap(err, "insert message")
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return s.earlierMessage(ctx, tx, m)
	}

	summary := m.Summary()
	for i, r := range m.Recipients {
		var dueAt any
		if r.Status == firstState {
			dueAt = micros(due)
		}
		if _, err := s.txExec(ctx, tx, `INSERT INTO recipients (message_id, address, account_id, kind, position,
			status, queued_at, due_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`,
			m.ID, r.Address, m.AccountID, string(r.Kind), i, string(r.Status), micros(due), dueAt); err != nil {
			return mailroom.AcceptResult{}, s.wrap(err, "insert recipient")
		}
		typ := firstEvent
		if r.Status == mailroom.RecipientSuppressed {
			typ = mailroom.EventEmailSuppressed
		}
		if err := s.insertEvent(ctx, tx, mailroom.NewEmailEvent(summary, r, typ, m.CreatedAt)); err != nil {
			return mailroom.AcceptResult{}, err
		}
	}
	for k, v := range m.Tags {
		if _, err := s.txExec(ctx, tx, `INSERT INTO message_tags (message_id, account_id, key, value)
			VALUES ($1, $2, $3, $4)`, m.ID, m.AccountID, k, v); err != nil {
			return mailroom.AcceptResult{}, s.wrap(err, "insert tag")
		}
	}
	return mailroom.AcceptResult{MessageID: m.ID, Status: m.Status}, nil
}

// earlierMessage answers a send whose idempotency key the account used
// before: a duplicate when the requests match, an error when they differ.
// IdempotentMessage answers a retry from the message stored under key.
func (s *Store) IdempotentMessage(ctx context.Context, accountID, key string, digest []byte) (mailroom.AcceptResult, error) {
	var id, status string
	var stored []byte
	err := s.readRow(ctx, `SELECT id, status, request_digest FROM messages
		WHERE account_id = $1 AND idempotency_key = $2`, accountID, key).Scan(&id, &status, &stored)
	if errors.Is(err, sql.ErrNoRows) {
		return mailroom.AcceptResult{}, mailroom.Errorf(mailroom.ECodeNotFound, "No message under this idempotency key.")
	}
	if err != nil {
		return mailroom.AcceptResult{}, s.wrap(err, "find idempotent message")
	}
	if !bytes.Equal(stored, digest) {
		return mailroom.AcceptResult{}, mailroom.Errorf(mailroom.ECodeIdempotencyKeyReused,
			"The idempotency key was used before with a different request (message %s).", id)
	}
	return mailroom.AcceptResult{MessageID: id, Status: mailroom.MessageStatus(status), Duplicate: true}, nil
}

func (s *Store) earlierMessage(ctx context.Context, tx *sql.Tx, m *mailroom.Message) (mailroom.AcceptResult, error) {
	var id, status string
	var digest []byte
	err := s.txQueryRow(ctx, tx, `SELECT id, status, request_digest FROM messages
		WHERE account_id = $1 AND idempotency_key = $2`, m.AccountID, m.IdempotencyKey).Scan(&id, &status, &digest)
	if err != nil {
		return mailroom.AcceptResult{}, s.wrap(err, "find idempotent message")
	}
	if !bytes.Equal(digest, m.RequestDigest) {
		return mailroom.AcceptResult{}, mailroom.Errorf(mailroom.ECodeIdempotencyKeyReused,
			"The idempotency key was used before with a different request (message %s).", id)
	}
	return mailroom.AcceptResult{MessageID: id, Status: mailroom.MessageStatus(status), Duplicate: true}, nil
}

// suppressedAmong returns which of m's recipients the account suppresses.
func (s *Store) suppressedAmong(ctx context.Context, tx *sql.Tx, m *mailroom.Message) (map[string]bool, error) {
	if len(m.Recipients) == 0 {
		return nil, nil
	}
	args := []any{m.AccountID}
	marks := make([]string, len(m.Recipients))
	for i, r := range m.Recipients {
		args = append(args, mailroom.AddressKey(r.Address))
		marks[i] = "$" + strconv.Itoa(i+2)
	}
	rows, err := s.txQuery(ctx, tx, `SELECT address FROM suppressions WHERE account_id = $1
		AND address IN (`+strings.Join(marks, ", ")+`)`, args...)
	if err != nil {
		return nil, s.wrap(err, "check suppressions")
	}
	defer rows.Close()
	out := map[string]bool{}
	for rows.Next() {
		var a string
		if err := rows.Scan(&a); err != nil {
			return nil, s.wrap(err, "check suppressions")
		}
		out[a] = true
	}
	return out, s.wrap(rows.Err(), "check suppressions")
}
