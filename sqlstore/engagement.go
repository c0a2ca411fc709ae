package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/mailroom/mailroom"
)

// Engagement tracking's storage (docs/api.md "Engagement tracking";
// migration 00028): a click-tracked message's links, each recipient's
// opens and clicks, and the message's opened and clicked flags that the
// log filters on.

// linkInsert writes a message's links; a link stored before is kept.
var linkInsert = multiInsert{
	head:  `INSERT INTO message_links (message_id, link_index, url) VALUES `,
	width: 3,
	tail:  ` ON CONFLICT (message_id, link_index) DO NOTHING`,
}

// SaveTrackedLinks implements mailroom.MessageStore: it stores a
// click-tracked message's links once, at most mailroom.MaxTrackedLinks of
// them. Every composition of a message finds the same links, so links
// already stored (a retry, another node composing the same message) are
// kept as they are, with their clicks, and nothing is added to them. A
// message that is gone (retention removed it) is ECodeNotFound, and no
// link is stored for it: nothing would ever remove it.
func (s *Store) SaveTrackedLinks(ctx context.Context, messageID string, links []string) error {
	if len(links) > mailroom.MaxTrackedLinks {
		links = links[:mailroom.MaxTrackedLinks]
	}
	var gone bool
	err := s.committer.do(ctx, func(ctx context.Context, tx *sql.Tx) error {
		// The job may run twice (alone, after its group failed): each run
		// starts from nothing. A missing message is an answer, not an
		// error, which would fail the group's other writes.
		gone = false
		var one int
		err := s.txQueryRow(ctx, tx, `SELECT 1 FROM messages WHERE id = $1`, messageKey(messageID)).Scan(&one)
		if errors.Is(err, sql.ErrNoRows) {
			gone = true
			return nil
		}
		if err != nil {
			return s.wrap(err, "save tracked links")
		}
		// Links stored before are the message's, all of them: none is
		// added to them. The message's row lock (the committer's, on
		// PostgreSQL; SQLite has one writer) orders two compositions
		// at once, so the second finds the first's.
		err = s.txQueryRow(ctx, tx, `SELECT 1 FROM message_links WHERE message_id = $1 LIMIT 1`, messageKey(messageID)).Scan(&one)
		if err == nil {
			return nil
		}
		if !errors.Is(err, sql.ErrNoRows) {
			return s.wrap(err, "save tracked links")
		}
		rows := make([]any, 0, len(links)*linkInsert.width)
		for i, u := range links {
			rows = append(rows, messageKey(messageID), i, u)
		}
		return s.wrap(s.insertRows(ctx, tx, linkInsert, rows, nil), "save tracked links")
	}, messageID)
	if err != nil {
		return err
	}
	if gone {
		return mailroom.Errorf(mailroom.ECodeNotFound, "No message %q.", messageID)
	}
	return nil
}

// trackedLinks reads a message's links in their order, for the log.
func (s *Store) trackedLinks(ctx context.Context, tx *sql.Tx, messageID string) ([]mailroom.TrackedLink, error) {
	rows, err := tx.QueryContext(ctx, `SELECT url, clicks FROM message_links WHERE message_id = $1 ORDER BY link_index`, messageKey(messageID))
	if err != nil {
		return nil, s.wrap(err, "message links")
	}
	links, err := collect(rows, func(row scanner) (mailroom.TrackedLink, error) {
		var l mailroom.TrackedLink
		return l, row.Scan(&l.URL, &l.Clicks)
	})
	return links, s.wrap(err, "message links")
}

// RecordEngagement implements mailroom.EngagementStore, in one
// transaction shared with other writes (group commit), with the message's
// row locked first on PostgreSQL (the committer's lock order; SQLite has
// one writer).
//
// The recipient's counts are raised by one UPDATE that returns the counts
// it made: of two first opens at once, the second waits for the first's
// row lock and then counts 2, so exactly one of them counts 1 and writes
// email.opened, whatever the engine (mailroom.EngagementCounts). The event
// goes through insertEvent, the path of every email event, so that it
// reaches the timeline, ListEvents and the webhook outbox in the same
// commit as the count.
func (s *Store) RecordEngagement(ctx context.Context, hit *mailroom.EngagementHit) (*mailroom.Event, error) {
	column, flag := "", ""
	switch hit.Type {
	case mailroom.EventEmailOpened:
		column, flag = "opens", "opened"
	case mailroom.EventEmailClicked:
		column, flag = "clicks", "clicked"
	default:
		return nil, fmt.Errorf("record engagement: %q is no engagement event", hit.Type)
	}
	var event *mailroom.Event
	var gone bool
	err := s.committer.do(ctx, func(ctx context.Context, tx *sql.Tx) error {
		// Each run starts from nothing (the job may run twice), and a
		// message or recipient that is gone is an answer, not an error
		// that would fail the group's other writes.
		event, gone = nil, false
		sum, err := s.engagedMessage(ctx, tx, hit.MessageID)
		if errors.Is(err, sql.ErrNoRows) {
			gone = true
			return nil
		}
		if err != nil {
			return err
		}
		// reader_opens counts the opens not marked machine, so that a
		// reader's first open after a filter's can be told.
		reader := 0
		if hit.Type == mailroom.EventEmailOpened && !hit.Machine {
			reader = 1
		}
		var readerOpens int
		r, err := scanRecipient(suffixScanner{s.txQueryRow(ctx, tx, `UPDATE recipients SET `+column+` = `+column+` + 1,
			reader_opens = reader_opens + $3
			WHERE message_id = $1 AND address = $2 RETURNING `+recipientColumns+`, reader_opens`,
			messageKey(hit.MessageID), hit.Recipient, reader), []any{&readerOpens}})
		if errors.Is(err, sql.ErrNoRows) {
			gone = true
			return nil
		}
		if err != nil {
			return s.wrap(err, "count engagement")
		}
		// The log's filter: set once, by the first hit of its kind.
		if _, err := s.txExec(ctx, tx, `UPDATE messages SET `+flag+` = 1 WHERE id = $1 AND `+flag+` = 0`,
			messageKey(hit.MessageID)); err != nil {
			return s.wrap(err, "mark message engaged")
		}
		// A link the message does not have (an index past those stored,
		// or a message whose links were never saved) counts on the
		// recipient alone.
		if hit.Type == mailroom.EventEmailClicked {
			if _, err := s.txExec(ctx, tx, `UPDATE message_links SET clicks = clicks + 1 WHERE message_id = $1 AND link_index = $2`,
				messageKey(hit.MessageID), hit.LinkIndex); err != nil {
				return s.wrap(err, "count link click")
			}
		}
		counts := mailroom.EngagementCounts{Opens: r.Opens, ReaderOpens: readerOpens, Clicks: r.Clicks}
		if !counts.WritesEvent(hit) {
			return nil
		}
		e := mailroom.NewEngagementEvent(sum, r, hit)
		if err := s.insertEvent(ctx, tx, e); err != nil {
			return err
		}
		event = e
		return nil
	}, hit.MessageID)
	if err != nil {
		return nil, err
	}
	if gone {
		return nil, mailroom.Errorf(mailroom.ECodeNotFound, "No recipient %q of message %q.", hit.Recipient, hit.MessageID)
	}
	return event, nil
}

// engagedMessage reads the summary of a message that an engagement event
// is made from (sql.ErrNoRows when there is none).
func (s *Store) engagedMessage(ctx context.Context, tx *sql.Tx, id string) (*mailroom.MessageSummary, error) {
	sum := &mailroom.MessageSummary{ID: id}
	refs := s.accountRefs()
	var envelope, category string
	var created int64
	err := s.txQueryRow(ctx, tx, `SELECT account_id, from_address, subject, domain, created_at, require_tls, track_opens,
		track_clicks, category, envelope FROM messages WHERE id = $1`, messageKey(id)).
		Scan(refs.column(&sum.AccountID), &sum.From, &sum.Subject, &sum.Domain, &created, &sum.RequireTLS,
			&sum.Tracking.Opens, &sum.Tracking.Clicks, &category, &envelope)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, err
	}
	if err != nil {
		return nil, s.wrap(err, "find engaged message")
	}
	if err := s.resolve(ctx, tx, refs); err != nil {
		return nil, err
	}
	sum.CreatedAt, sum.Category = fromMicros(created), mailroom.Category(category)
	if sum.Tags, err = envelopeTags(envelope); err != nil {
		return nil, fmt.Errorf("message %s envelope: %w", id, err)
	}
	return sum, nil
}
