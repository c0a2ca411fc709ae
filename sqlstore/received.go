package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/mailroom/mailroom"
)

// Received mail (docs/api.md "Receiving mail", migration 00027): one row of
// received_messages per message, the decoded bytes of its attachments in
// received_attachments, its email.received event in events (with no
// message, as a domain's: the webhook retention removes it by age).

var _ mailroom.ReceivedStore = (*Store)(nil)

// ReceivingDomains finds the domains named name that take mail
// (Domain.ReceivesMail), one per account that has it. domains_receiving
// finds the rows whose flag is set; the rest of the policy is the root's,
// applied to each.
func (s *Store) ReceivingDomains(ctx context.Context, name string) ([]mailroom.ReceivingDomain, error) {
	rows, err := s.read.QueryContext(ctx, `SELECT `+domainColumns+` FROM domains WHERE name = $1 AND receiving = 1`, name)
	if err != nil {
		return nil, s.wrap(err, "receiving domains")
	}
	all, err := collect(rows, scanDomain)
	if err != nil {
		return nil, s.wrap(err, "receiving domains")
	}
	out := []mailroom.ReceivingDomain{}
	for _, d := range all {
		if d.ReceivesMail() {
			out = append(out, mailroom.ReceivingDomain{AccountID: d.AccountID, Name: d.Name})
		}
	}
	return out, nil
}

// SaveReceived stores msgs, their attachments and events in one
// transaction: a message is stored whole with its event, or nothing is.
func (s *Store) SaveReceived(ctx context.Context, msgs []*mailroom.ReceivedMessage, events []*mailroom.Event) error {
	rows := make([][]any, len(msgs))
	for i, m := range msgs {
		r, err := receivedRow(m)
		if err != nil {
			return err
		}
		rows[i] = r
	}
	return s.inTx(ctx, func(tx *sql.Tx) error {
		for i, m := range msgs {
			// An account no one has is refused, as an event's is.
			if _, err := s.writtenAccountKey(ctx, tx, m.AccountID); err != nil {
				return err
			}
			_, err := tx.ExecContext(ctx, `INSERT INTO received_messages (`+receivedColumns+`, raw)
				VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20, $21, $22)`, rows[i]...)
			if err != nil && s.dialect.Errors.UniqueViolation(err) {
				return mailroom.Errorf(mailroom.ECodeAlreadyExists, "A received message %s exists already.", m.ID)
			}
			if err != nil {
				return s.wrap(err, "save received message")
			}
			for _, a := range m.Attachments {
				content := a.Content
				if content == nil {
					content = []byte{}
				}
				if _, err := tx.ExecContext(ctx, `INSERT INTO received_attachments (message_id, id, content) VALUES ($1, $2, $3)`,
					m.ID, a.ID, content); err != nil {
					if s.dialect.Errors.UniqueViolation(err) {
						return mailroom.Errorf(mailroom.ECodeAlreadyExists, "Message %s has two attachments %s.", m.ID, a.ID)
					}
					return s.wrap(err, "save received attachment")
				}
			}
		}
		for _, e := range events {
			if err := s.insertEvent(ctx, tx, e); err != nil {
				return err
			}
		}
		return nil
	})
}

// ListReceived lists an account's received messages newest first, by
// (received_at, id), which received_by_account serves. The filters to and
// from compare the lower-case keys made when the message was stored.
func (s *Store) ListReceived(ctx context.Context, accountID string, f mailroom.ReceivedFilter, p mailroom.Page) ([]*mailroom.ReceivedMessage, string, error) {
	after, err := parseIDCursor(p.Cursor, mailroom.PrefixReceived)
	if err != nil {
		return nil, "", err
	}
	limit := pageLimit(p)
	where := []string{`account_id = $1`, `(received_at < $2 OR (received_at = $2 AND id < $3))`}
	args := []any{accountID, after.at, after.id}
	add := func(cond string, v any) {
		args = append(args, v)
		where = append(where, fmt.Sprintf(cond, len(args)))
	}
	if f.To != "" {
		add(`recipient_keys LIKE $%d ESCAPE '!'`, "%"+likeEscape(recipientKeys([]string{f.To}))+"%")
	}
	if f.From != "" {
		add(`from_key = $%d`, addressKey(f.From))
	}
	if !f.Since.IsZero() {
		add(`received_at >= $%d`, micros(f.Since))
	}
	if !f.Until.IsZero() {
		add(`received_at < $%d`, micros(f.Until))
	}
	args = append(args, limit+1)
	rows, err := s.read.QueryContext(ctx, `SELECT `+receivedColumns+` FROM received_messages WHERE `+strings.Join(where, " AND ")+
		fmt.Sprintf(` ORDER BY received_at DESC, id DESC LIMIT $%d`, len(args)), args...)
	if err != nil {
		return nil, "", s.wrap(err, "list received")
	}
	out, err := collect(rows, scanReceived)
	if err != nil {
		return nil, "", s.wrap(err, "list received")
	}
	for _, m := range out {
		// A list shows what a message is, not what it says.
		m.Headers, m.Text, m.HTML = nil, "", ""
	}
	out, next := trimPage(out, limit, func(m *mailroom.ReceivedMessage) cursor { return cursor{at: micros(m.ReceivedAt), id: m.ID} })
	return out, next, nil
}

// Received finds one of an account's received messages, parsed.
func (s *Store) Received(ctx context.Context, accountID, id string) (*mailroom.ReceivedMessage, error) {
	m, err := scanReceived(s.read.QueryRowContext(ctx, `SELECT `+receivedColumns+` FROM received_messages
		WHERE id = $1 AND account_id = $2`, id, accountID))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, noReceived(id)
	}
	return m, s.wrap(err, "received message")
}

// ReceivedRaw is a received message's stored bytes.
func (s *Store) ReceivedRaw(ctx context.Context, accountID, id string) ([]byte, error) {
	var raw []byte
	err := s.read.QueryRowContext(ctx, `SELECT raw FROM received_messages WHERE id = $1 AND account_id = $2`, id, accountID).Scan(&raw)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, noReceived(id)
	}
	if raw == nil {
		raw = []byte{}
	}
	return raw, s.wrap(err, "received raw")
}

// ReceivedAttachment is one attachment of a received message, its
// metadata from the message's row and its bytes from
// received_attachments, read in one snapshot.
func (s *Store) ReceivedAttachment(ctx context.Context, accountID, id, attachmentID string) (*mailroom.ReceivedAttachment, error) {
	var out *mailroom.ReceivedAttachment
	err := s.inSnapshot(ctx, func(tx *sql.Tx) error {
		var list string
		err := tx.QueryRowContext(ctx, `SELECT attachments FROM received_messages WHERE id = $1 AND account_id = $2`, id, accountID).Scan(&list)
		if errors.Is(err, sql.ErrNoRows) {
			return noReceived(id)
		}
		if err != nil {
			return s.wrap(err, "received attachment")
		}
		atts, err := unmarshalAttachments(id, list)
		if err != nil {
			return err
		}
		for i := range atts {
			if atts[i].ID == attachmentID {
				out = &atts[i]
			}
		}
		if out == nil {
			return mailroom.Errorf(mailroom.ECodeNotFound, "Received message %s has no attachment %q.", id, attachmentID)
		}
		err = tx.QueryRowContext(ctx, `SELECT content FROM received_attachments WHERE message_id = $1 AND id = $2`, id, attachmentID).Scan(&out.Content)
		if errors.Is(err, sql.ErrNoRows) {
			return mailroom.Errorf(mailroom.ECodeNotFound, "Received message %s has no attachment %q.", id, attachmentID)
		}
		if out.Content == nil {
			out.Content = []byte{}
		}
		return s.wrap(err, "received attachment")
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// DeleteReceivedBefore deletes up to limit messages received before t,
// oldest first (received_by_time), with their attachments, in one
// transaction. Their events go with the events of no message
// (DeleteExpiredWebhookData), by the same period.
func (s *Store) DeleteReceivedBefore(ctx context.Context, t time.Time, limit int) (int, error) {
	n := 0
	err := s.inTx(ctx, func(tx *sql.Tx) error {
		rows, err := tx.QueryContext(ctx, `SELECT id FROM received_messages WHERE received_at < $1 ORDER BY received_at LIMIT $2`, micros(t), limit)
		if err != nil {
			return s.wrap(err, "find expired received mail")
		}
		ids, err := collect(rows, func(r scanner) (string, error) {
			var id string
			return id, r.Scan(&id)
		})
		if err != nil {
			return s.wrap(err, "find expired received mail")
		}
		for _, id := range ids {
			if _, err := tx.ExecContext(ctx, `DELETE FROM received_attachments WHERE message_id = $1`, id); err != nil {
				return s.wrap(err, "delete received attachments")
			}
			if _, err := tx.ExecContext(ctx, `DELETE FROM received_messages WHERE id = $1`, id); err != nil {
				return s.wrap(err, "delete received message")
			}
		}
		n = len(ids)
		return nil
	})
	return n, err
}

func noReceived(id string) error {
	return mailroom.Errorf(mailroom.ECodeNotFound, "No received message %q.", id)
}
