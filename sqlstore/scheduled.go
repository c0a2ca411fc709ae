package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"time"

	"github.com/mailroom/mailroom"
)

// ListScheduled lists an account's scheduled messages by (scheduled_at,
// id), soonest first, through the partial index messages_scheduled
// (migration 00009). The cursor is the last item's key; the next page
// starts strictly after it.
func (s *Store) ListScheduled(ctx context.Context, accountID string, p mailroom.Page) ([]*mailroom.Message, string, error) {
	after := cursor{at: -1 << 63}
	if p.Cursor != "" {
		var err error
		if after, err = parseIDCursor(p.Cursor, mailroom.PrefixMessage); err != nil {
			return nil, "", err
		}
	}
	account, err := s.accountKey(ctx, nil, accountID)
	if err != nil {
		return nil, "", err
	}
	limit := pageLimit(p)
	out, err := s.listWithRecipients(ctx, `SELECT `+logColumns+` FROM messages
		WHERE account_id = $1 AND status = 'scheduled' AND (scheduled_at, id) > ($2, $3)
		ORDER BY scheduled_at, id LIMIT $4`, account, after.at, messageKey(after.id), limit+1)
	if err != nil {
		return nil, "", err
	}
	out, next := trimPage(out, limit, func(m *mailroom.Message) cursor { return cursor{at: micros(*m.ScheduledAt), id: m.ID} })
	return out, next, nil
}

// RescheduleMessage moves a scheduled message's time and its recipients'
// due time (and queued_at, from which the retry window counts); a time
// that has come starts the message now.
func (s *Store) RescheduleMessage(ctx context.Context, accountID, id string, at, now time.Time) error {
	return s.committer.do(ctx, func(ctx context.Context, tx *sql.Tx) error {
		sum, err := s.scheduledForChange(ctx, tx, accountID, id, "rescheduled")
		if err != nil {
			return err
		}
		if _, err := s.txExec(ctx, tx, `UPDATE messages SET scheduled_at = $2 WHERE id = $1`, messageKey(id), micros(at)); err != nil {
			return s.wrap(err, "reschedule")
		}
		if _, err := s.txExec(ctx, tx, `UPDATE recipients SET due_at = $2, queued_at = $2, next_attempt_at = $2
			WHERE message_id = $1 AND status = 'scheduled'`, messageKey(id), micros(at)); err != nil {
			return s.wrap(err, "reschedule")
		}
		if at.After(now) {
			return nil
		}
		_, err = s.startMessages(ctx, tx, map[string]*mailroom.MessageSummary{id: sum}, []string{id}, now)
		return err
	}, id)
}

// CancelMessage cancels a scheduled message: its waiting recipients
// become canceled, each with its event, and the message canceled.
func (s *Store) CancelMessage(ctx context.Context, accountID, id string, now time.Time) error {
	return s.committer.do(ctx, func(ctx context.Context, tx *sql.Tx) error {
		sum, err := s.scheduledForChange(ctx, tx, accountID, id, "canceled")
		if err != nil {
			return err
		}
		rows, err := s.txQuery(ctx, tx, `UPDATE recipients SET status = 'canceled', due_at = NULL, next_attempt_at = NULL
			WHERE message_id = $1 AND status = 'scheduled' RETURNING address`, messageKey(id))
		if err != nil {
			return s.wrap(err, "cancel")
		}
		addresses, err := collect(rows, func(r scanner) (string, error) {
			var a string
			return a, r.Scan(&a)
		})
		if err != nil {
			return s.wrap(err, "cancel")
		}
		for _, a := range addresses {
			r := &mailroom.Recipient{MessageID: id, Address: a, Status: mailroom.RecipientCanceled}
			if err := s.insertEvent(ctx, tx, mailroom.NewEmailEvent(sum, r, mailroom.EventEmailCanceled, now)); err != nil {
				return err
			}
		}
		return s.rederiveStatus(ctx, tx, id)
	}, id)
}

// scheduledForChange reads the summary of a message that a cancel or a
// reschedule may change: the account's, still scheduled, and none of its
// recipients claimed. The committer has locked its row (on PostgreSQL; on
// SQLite the one writer serialises), so a claim either took it before (its
// status is queued by then: StartScheduled) or will find it changed.
func (s *Store) scheduledForChange(ctx context.Context, tx *sql.Tx, accountID, id, change string) (*mailroom.MessageSummary, error) {
	sum := &mailroom.MessageSummary{ID: id, AccountID: accountID}
	var status, category string
	var created int64
	var claimed int
	account, err := s.accountKey(ctx, tx, accountID)
	if err != nil {
		return nil, err
	}
	err = s.txQueryRow(ctx, tx, `SELECT m.status, m.from_address, m.subject, m.domain, m.created_at, m.track_opens, m.track_clicks, m.category,
		(SELECT count(*) FROM recipients r WHERE r.message_id = m.id AND r.claim_token IS NOT NULL)
		FROM messages m WHERE m.id = $1 AND m.account_id = $2`, messageKey(id), account).
		Scan(&status, &sum.From, &sum.Subject, &sum.Domain, &created, &sum.Tracking.Opens, &sum.Tracking.Clicks, &category, &claimed)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return nil, mailroom.Errorf(mailroom.ECodeNotFound, "No message %q in this account.", id)
	case err != nil:
		return nil, s.wrap(err, "find scheduled message")
	case status != string(mailroom.MessageScheduled):
		return nil, mailroom.Errorf(mailroom.ECodeInvalidState, "The message is %s, no longer scheduled: it cannot be %s.", status, change)
	case claimed > 0:
		return nil, mailroom.Errorf(mailroom.ECodeInvalidState, "The message is being sent: it cannot be %s.", change)
	}
	sum.CreatedAt, sum.Category = fromMicros(created), mailroom.Category(category)
	tags, err := s.tagsOf(ctx, tx, []any{messageKey(id)})
	sum.Tags = tags[id]
	return sum, err
}

// tagsOf reads the tags of messages (their keys) from their envelopes,
// by message id: message_tags is keyed by tag (migration 00015).
func (s *Store) tagsOf(ctx context.Context, tx *sql.Tx, keys []any) (map[string]map[string]string, error) {
	tags := map[string]map[string]string{}
	err := s.eachRow(ctx, tx, `SELECT id, envelope FROM messages WHERE id IN (`+
		placeholders(1, len(keys))+`)`, keys, func(rows *sql.Rows) error {
		var m mailroom.Message
		var envelope string
		if err := rows.Scan(messageColumn(&m.ID), &envelope); err != nil {
			return err
		}
		if err := decodeEnvelope(envelope, &m); err != nil {
			return err
		}
		if len(m.Tags) > 0 {
			tags[m.ID] = m.Tags
		}
		return nil
	})
	return tags, s.wrap(err, "read tags")
}

// startScheduled starts the scheduled messages among claimed recipients,
// inside the claim's transaction (docs/api.md "Scheduled sends"), whole:
// their recipients that the claim skipped (a busy domain's) start too,
// queued and unclaimed (startMessages). It returns the claimed recipients
// to deliver: those of other messages, and those now queued; the ones
// finished here have left the claim.
func (s *Store) startScheduled(ctx context.Context, tx *sql.Tx, claimed []*mailroom.QueuedRecipient, now time.Time) ([]*mailroom.QueuedRecipient, error) {
	byID := map[string]*mailroom.MessageSummary{}
	var ids []string
	for _, q := range claimed {
		if q.Status == mailroom.RecipientScheduled && byID[q.MessageID] == nil {
			byID[q.MessageID] = q.Message
			ids = append(ids, q.MessageID)
		}
	}
	if len(ids) == 0 {
		return claimed, nil
	}
	next, err := s.startMessages(ctx, tx, byID, ids, now)
	if err != nil {
		return nil, err
	}
	out := claimed[:0]
	for _, q := range claimed {
		if st, ok := next[q.MessageID+"\x00"+q.Address]; ok {
			if st.Finished() {
				continue
			}
			q.Status = st
		}
		out = append(out, q)
	}
	return out, nil
}

// startMessages starts scheduled messages (ids, each summarised in byID):
// every recipient still scheduled becomes what mailroom.DueRecipient says,
// with its event, a finished one leaving any claim it was under, and each
// message's status follows. It returns the new states by message id and
// address (joined by NUL).
func (s *Store) startMessages(ctx context.Context, tx *sql.Tx, byID map[string]*mailroom.MessageSummary, ids []string, now time.Time) (map[string]mailroom.RecipientStatus, error) {
	in := placeholders(1, len(ids))
	keys := keysOf(messageKey, ids)
	// The category decides what the suppression list stops: an
	// unsubscribe stops marketing mail only.
	categories := map[string]mailroom.Category{}
	err := s.eachRow(ctx, tx, `SELECT id, category FROM messages WHERE id IN (`+in+`)`, keys,
		func(rows *sql.Rows) error {
			var id, category string
			if err := rows.Scan(messageColumn(&id), &category); err != nil {
				return err
			}
			categories[id] = mailroom.Category(category)
			return nil
		})
	if err != nil {
		return nil, s.wrap(err, "start scheduled: categories")
	}
	// Each message's sending domain, as it stands now (none: deleted),
	// read once for each account and domain among them. (The domains'
	// account ids are text, the messages' keys: they are not joined.)
	type sendingDomain struct{ account, name string }
	statuses := map[sendingDomain]*mailroom.DomainStatus{}
	domains := map[string]*mailroom.DomainStatus{}
	for _, id := range ids {
		d := sendingDomain{byID[id].AccountID, byID[id].Domain}
		st, read := statuses[d]
		if !read {
			var status string
			err := s.txQueryRow(ctx, tx, `SELECT status FROM domains WHERE account_id = $1 AND name = $2`, d.account, d.name).Scan(&status)
			switch {
			case errors.Is(err, sql.ErrNoRows):
			case err != nil:
				return nil, s.wrap(err, "start scheduled: domains")
			default:
				st = new(mailroom.DomainStatus(status))
			}
			statuses[d] = st
		}
		if st != nil {
			domains[id] = st
		}
	}
	type waiting struct{ id, address string }
	var all []waiting
	err = s.eachRow(ctx, tx, `SELECT message_id, address FROM recipients WHERE message_id IN (`+in+`)
		AND status = 'scheduled' ORDER BY message_id, position`, keys, func(rows *sql.Rows) error {
		var w waiting
		if err := rows.Scan(messageColumn(&w.id), &w.address); err != nil {
			return err
		}
		all = append(all, w)
		return nil
	})
	if err != nil {
		return nil, s.wrap(err, "start scheduled: recipients")
	}
	var ms []*mailroom.Message
	for _, id := range ids {
		m := &mailroom.Message{AccountID: byID[id].AccountID, Category: categories[id]}
		for _, w := range all {
			if w.id == id {
				m.Recipients = append(m.Recipients, &mailroom.Recipient{Address: w.address})
			}
		}
		ms = append(ms, m)
	}
	suppressed, err := s.suppressedAmong(ctx, tx, ms)
	if err != nil {
		return nil, err
	}
	next := map[string]mailroom.RecipientStatus{} // by id and address
	for _, w := range all {
		sum := byID[w.id]
		st := domains[w.id]
		status, typ, detail := mailroom.DueRecipient(sum.Domain, deref(st), st != nil,
			suppressed.stops(sum.AccountID, w.address, categories[w.id]))
		next[w.id+"\x00"+w.address] = status
		r := &mailroom.Recipient{MessageID: w.id, Address: w.address, Status: status, SMTPResponse: detail}
		query := `UPDATE recipients SET status = $3, next_attempt_at = NULL WHERE message_id = $1 AND address = $2`
		if status.Finished() {
			query = `UPDATE recipients SET status = $3, next_attempt_at = NULL, due_at = NULL, smtp_response = $4,
				claim_node = NULL, claim_token = NULL, lease_until = NULL WHERE message_id = $1 AND address = $2`
		}
		args := []any{messageKey(w.id), w.address, string(status)}
		if status.Finished() {
			args = append(args, nullString(detail))
		}
		if _, err := s.txExec(ctx, tx, query, args...); err != nil {
			return nil, s.wrap(err, "start scheduled")
		}
		if err := s.insertEvent(ctx, tx, mailroom.NewEmailEvent(sum, r, typ, now)); err != nil {
			return nil, err
		}
	}
	for _, id := range ids {
		if err := s.rederiveStatus(ctx, tx, id); err != nil {
			return nil, err
		}
	}
	return next, nil
}

func deref(st *mailroom.DomainStatus) mailroom.DomainStatus {
	if st == nil {
		return ""
	}
	return *st
}
