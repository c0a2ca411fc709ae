package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"

	"github.com/mailroom/mailroom"
)

// deliveryColumns are a whole message row, content and raw bytes
// included: what delivery needs (messageRow, scanMessage) and the email
// log must never read.
const deliveryColumns = `id, account_id, status, subject, category, domain, idempotency_key, content, created_at, scheduled_at, raw`

// logColumns are what the email log shows of a message: small columns
// only. A message's content (bodies, base64 attachments: up to ~10 MiB) and
// raw bytes stay unread; its addresses and tags come from envelope.
//
// In SQLite, created_at, scheduled_at and envelope lie after content and
// raw in the row's record, so reading them still steps through content's
// overflow pages (page reads, nothing copied or decoded): a list of 20
// rows with 2 MiB attachments takes ~30 ms there, against ~0.5 s when
// content was decoded, and under 1 ms in PostgreSQL, which keeps large
// values out of line. Only a table of their own for content and raw would
// make it as cheap in SQLite.
const logColumns = `id, account_id, status, subject, category, domain, idempotency_key, envelope, created_at, scheduled_at`

type querier interface {
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// messageRow reads one whole message (content and raw bytes) by a WHERE
// clause, for delivery.
func (s *Store) messageRow(ctx context.Context, q querier, where string, args ...any) (*mailroom.Message, []byte, error) {
	var raw []byte
	m, err := scanMessage(q.QueryRowContext(ctx, `SELECT `+deliveryColumns+` FROM messages `+where, args...), &raw)
	return m, raw, err
}

// scanMessage reads a row of deliveryColumns; raw receives the signed
// bytes, or nil drops them.
func scanMessage(row scanner, raw *[]byte) (*mailroom.Message, error) {
	var m mailroom.Message
	var status, category, content string
	var key sql.NullString
	var created int64
	var scheduled sql.NullInt64
	var rawDst any = new([]byte)
	if raw != nil {
		rawDst = raw
	}
	if err := row.Scan(&m.ID, &m.AccountID, &status, &m.Subject, &category, &m.Domain, &key, &content,
		&created, &scheduled, rawDst); err != nil {
		return nil, err
	}
	if err := decodeContent(content, &m); err != nil {
		return nil, fmt.Errorf("message %s content: %w", m.ID, err)
	}
	m.Status, m.Category, m.IdempotencyKey = mailroom.MessageStatus(status), mailroom.Category(category), key.String
	m.CreatedAt, m.ScheduledAt = fromMicros(created), fromNullMicros(scheduled)
	return &m, nil
}

// scanLogMessage reads a row of logColumns: a message as the log shows it,
// without bodies, headers, attachments or Message-ID header.
func scanLogMessage(row scanner) (*mailroom.Message, error) {
	var m mailroom.Message
	var status, category, envelope string
	var key sql.NullString
	var created int64
	var scheduled sql.NullInt64
	if err := row.Scan(&m.ID, &m.AccountID, &status, &m.Subject, &category, &m.Domain, &key, &envelope,
		&created, &scheduled); err != nil {
		return nil, err
	}
	if err := decodeEnvelope(envelope, &m); err != nil {
		return nil, fmt.Errorf("message %s envelope: %w", m.ID, err)
	}
	m.Status, m.Category, m.IdempotencyKey = mailroom.MessageStatus(status), mailroom.Category(category), key.String
	m.CreatedAt, m.ScheduledAt = fromMicros(created), fromNullMicros(scheduled)
	return &m, nil
}

// Message returns an account's message with its recipients and timeline,
// as the log shows it: its content (bodies, attachments) is not read. The
// three reads share one snapshot, so that the status, the recipients and
// the events agree even while the message is being sent.
func (s *Store) Message(ctx context.Context, accountID, id string) (m *mailroom.Message, events []*mailroom.Event, err error) {
	err = s.inSnapshot(ctx, func(tx *sql.Tx) error {
		m, err = scanLogMessage(tx.QueryRowContext(ctx, `SELECT `+logColumns+` FROM messages
			WHERE id = $1 AND account_id = $2`, id, accountID))
		if errors.Is(err, sql.ErrNoRows) {
			return mailroom.Errorf(mailroom.ECodeNotFound, "No message %q in this account.", id)
		}
		if err != nil {
			return s.wrap(err, "find message")
		}
		rows, err := tx.QueryContext(ctx, `SELECT message_id, address, kind, status, attempts, last_attempt_at,
			next_attempt_at, smtp_code, smtp_response, mx, unencrypted FROM recipients WHERE message_id = $1 ORDER BY position`, id)
		if err != nil {
			return s.wrap(err, "message recipients")
		}
		if m.Recipients, err = collect(rows, scanRecipient); err != nil {
			return s.wrap(err, "message recipients")
		}
		rows, err = tx.QueryContext(ctx, `SELECT `+eventColumns+` FROM events WHERE message_id = $1 ORDER BY id`, id)
		if err != nil {
			return s.wrap(err, "message events")
		}
		events, err = collect(rows, scanEvent)
		return s.wrap(err, "message events")
	})
	if err != nil {
		return nil, nil, err
	}
	return m, events, nil
}

func scanRecipient(row scanner) (*mailroom.Recipient, error) {
	var r mailroom.Recipient
	var kind, status string
	var last, next, code sql.NullInt64
	var resp, mx sql.NullString
	if err := row.Scan(&r.MessageID, &r.Address, &kind, &status, &r.Attempts, &last, &next, &code, &resp, &mx, &r.Unencrypted); err != nil {
		return nil, err
	}
	r.Kind, r.Status = mailroom.RecipientKind(kind), mailroom.RecipientStatus(status)
	r.LastAttemptAt, r.NextAttemptAt = fromNullMicros(last), fromNullMicros(next)
	r.SMTPCode, r.SMTPResponse, r.MX = int(code.Int64), resp.String, mx.String
	return &r, nil
}

// ListMessages lists an account's messages newest first, filtered, without
// their content (as Message). Each
// filter is served by an index that leads with the account: status and
// from (whatever its case) by their own, to through recipients_by_address,
// each tag through
// message_tags_lookup; ids sort by creation time, so paging and since/until
// ride the primary order.
func (s *Store) ListMessages(ctx context.Context, accountID string, f mailroom.MessageFilter, p mailroom.Page) ([]*mailroom.Message, string, error) {
	after, err := parseCursor(p.Cursor)
	if err != nil {
		return nil, "", err
	}
	limit := pageLimit(p)
	where := []string{"account_id = $1"}
	args := []any{accountID}
	add := func(cond string, v any) {
		args = append(args, v)
		where = append(where, strings.ReplaceAll(cond, "?", fmt.Sprintf("$%d", len(args))))
	}
	if after.id != "" {
		add("id < ?", after.id)
	}
	if f.Status != "" {
		add("status = ?", string(f.Status))
	}
	if f.From != "" {
		// As for to below: lower() is the AddressKey, served by
		// messages_by_from_key (migration 00007).
		add("lower(from_address) = ?", mailroom.AddressKey(f.From))
	}
	if f.Category != "" {
		add("category = ?", string(f.Category))
	}
	switch {
	case strings.HasPrefix(f.Template, mailroom.PrefixTemplate):
		add("template_id = ?", f.Template)
	case f.Template != "":
		// The name the template had when the message was sent: a
		// deleted template's messages are still found by it.
		add("template_name = ?", f.Template)
	}
	if f.Since != nil {
		add("created_at >= ?", micros(*f.Since))
	}
	if f.Until != nil {
		add("created_at < ?", micros(*f.Until))
	}
	if f.To != "" {
		// Addresses are ASCII (validation refuses non-ASCII local parts and
		// turns domains into A-labels), so lower() is the AddressKey.
		args = append(args, mailroom.AddressKey(f.To))
		where = append(where, fmt.Sprintf("id IN (SELECT message_id FROM recipients WHERE account_id = $1 AND lower(address) = $%d)", len(args)))
	}
	for _, t := range f.Tags {
		// One lookup per tag, all required: a message holds one value
		// per key, so each pair narrows the set.
		args = append(args, t.Key, t.Value)
		where = append(where, fmt.Sprintf("id IN (SELECT message_id FROM message_tags WHERE account_id = $1 AND key = $%d AND value = $%d)", len(args)-1, len(args)))
	}
	args = append(args, limit+1)
	out, err := s.listWithRecipients(ctx, `SELECT `+logColumns+` FROM messages WHERE `+
		strings.Join(where, " AND ")+fmt.Sprintf(` ORDER BY id DESC LIMIT $%d`, len(args)), args...)
	if err != nil {
		return nil, "", err
	}
	out, next := trimPage(out, limit, func(x *mailroom.Message) cursor { return cursor{at: micros(x.CreatedAt), id: x.ID} })
	return out, next, nil
}

// listWithRecipients reads the messages a query of logColumns lists and
// their recipients, in one snapshot: a message's status and its
// recipients' states agree.
func (s *Store) listWithRecipients(ctx context.Context, query string, args ...any) (out []*mailroom.Message, err error) {
	err = s.inSnapshot(ctx, func(tx *sql.Tx) error {
		rows, err := tx.QueryContext(ctx, query, args...)
		if err != nil {
			return s.wrap(err, "list messages")
		}
		if out, err = collect(rows, scanLogMessage); err != nil {
			return s.wrap(err, "list messages")
		}
		return s.attachRecipients(ctx, tx, out)
	})
	return out, err
}

// attachRecipients fills the recipients of listed messages in one query.
func (s *Store) attachRecipients(ctx context.Context, tx *sql.Tx, ms []*mailroom.Message) error {
	if len(ms) == 0 {
		return nil
	}
	byID := map[string]*mailroom.Message{}
	args := make([]any, len(ms))
	for i, m := range ms {
		byID[m.ID] = m
		args[i] = m.ID
	}
	rows, err := tx.QueryContext(ctx, `SELECT message_id, address, kind, status, attempts, last_attempt_at,
		next_attempt_at, smtp_code, smtp_response, mx, unencrypted FROM recipients WHERE message_id IN (`+placeholders(1, len(ms))+`)
		ORDER BY message_id, position`, args...)
	if err != nil {
		return s.wrap(err, "list recipients")
	}
	rs, err := collect(rows, scanRecipient)
	if err != nil {
		return s.wrap(err, "list recipients")
	}
	for _, r := range rs {
		byID[r.MessageID].Recipients = append(byID[r.MessageID].Recipients, r)
	}
	return nil
}
