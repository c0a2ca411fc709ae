package sqlstore

import (
	"context"
	"database/sql"
	"errors"

	"github.com/mailroom/mailroom"
)

// Reports received at the return-path MX (docs/api.md "Mail coming back").

// ReturnPathDomainExists says whether some account's domain that can send
// (verified, or in its grace period) has domain as its bounce subdomain.
func (s *Store) ReturnPathDomainExists(ctx context.Context, domain string) (bool, error) {
	var n int
	err := s.readRow(ctx, `SELECT count(*) FROM (SELECT 1 FROM domains WHERE return_path_domain = $1
		AND status IN ($2, $3) LIMIT 1) AS d`, domain, string(mailroom.DomainVerified), string(mailroom.DomainTemporaryFailure)).Scan(&n)
	return n > 0, s.wrap(err, "find return-path domain")
}

// ReportedMessage finds a message by id in whatever account, with its
// recipients and tags.
func (s *Store) ReportedMessage(ctx context.Context, id string) (*mailroom.Message, error) {
	var account string
	refs := s.accountRefs()
	err := s.readRow(ctx, `SELECT account_id FROM messages WHERE id = $1`, messageKey(id)).Scan(refs.column(&account))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, mailroom.Errorf(mailroom.ECodeNotFound, "No message %q.", id)
	}
	if err == nil {
		err = s.resolve(ctx, nil, refs)
	}
	if err != nil {
		return nil, s.wrap(err, "find reported message")
	}
	// The log's reading has the tags, from the envelope; a report needs
	// no timeline.
	m, _, err := s.message(ctx, account, id, false)
	return m, err
}

// RecordReport applies a report's outcome for one recipient: its status
// and reply (ending any claim on it, so that an attempt in flight cannot
// overwrite a late bounce), its event, a suppression, and the message's
// status, in one transaction shared with other writes. A recipient already
// in the report's state is left as it is, with no second event: a sender
// that retries a report applies it once. An outcome is applied only while
// the recipient has fewer than o.MaxAsync events of its type from
// reports; the message's row lock, which the committer takes first on
// PostgreSQL (SQLite has one writer), keeps two reports from both
// counting one short of it.
func (s *Store) RecordReport(ctx context.Context, o *mailroom.ReportOutcome) error {
	return s.committer.do(ctx, func(ctx context.Context, tx *sql.Tx) error {
		if o.MaxAsync > 0 && o.Event != nil {
			n, err := s.asyncEvents(ctx, tx, o, o.MaxAsync)
			if err != nil || n >= o.MaxAsync {
				// As many as reports may leave: nothing more.
				return err
			}
		}
		if o.Status != "" {
			var code any
			if o.SMTPCode != 0 {
				code = o.SMTPCode
			}
			res, err := s.txExec(ctx, tx, `UPDATE recipients SET status = $3, smtp_code = $4, smtp_response = $5,
				due_at = NULL, next_attempt_at = NULL, claim_node = NULL, claim_token = NULL, lease_until = NULL
				WHERE message_id = $1 AND address = $2 AND status <> $3`, messageKey(o.MessageID), o.Address, string(o.Status), code, o.SMTPResponse)
			if err != nil {
				return s.wrap(err, "record report")
			}
			if n, _ := res.RowsAffected(); n == 0 {
				// Already in that state: the same report again (a sender
				// retrying after a 451), or a second one. Nothing more.
				var n int
				err := s.txQueryRow(ctx, tx, `SELECT count(*) FROM recipients WHERE message_id = $1 AND address = $2`, messageKey(o.MessageID), o.Address).Scan(&n)
				if err == nil && n == 0 {
					return mailroom.Errorf(mailroom.ECodeNotFound, "No recipient %q of message %q.", o.Address, o.MessageID)
				}
				return s.wrap(err, "record report")
			}
		}
		if o.Event != nil {
			if err := s.insertEvent(ctx, tx, o.Event); err != nil {
				return err
			}
		}
		if o.Suppress != nil {
			if _, err := s.addSuppression(ctx, tx, o.Suppress); err != nil {
				return err
			}
		}
		if o.Status == "" {
			return nil
		}
		return s.rederiveStatus(ctx, tx, o.MessageID)
	}, o.MessageID)
}

// asyncEvents counts, up to limit, the events of o's type that reports
// wrote for o's recipient: those whose data says "async":true
// (mailroom.EmailEventDetail.Async; a JSON string holding those characters
// has its quotes escaped, so only the member matches). The message's
// events are read by events_by_message, and a message's events are few.
func (s *Store) asyncEvents(ctx context.Context, tx *sql.Tx, o *mailroom.ReportOutcome, limit int) (int, error) {
	var n int
	err := s.txQueryRow(ctx, tx, `SELECT count(*) FROM (SELECT 1 FROM events
		WHERE message_id = $1 AND recipient = $2 AND type = $3 AND data LIKE $4 LIMIT $5) AS e`,
		messageKey(o.MessageID), o.Address, o.Event.Type, `%"async":true%`, limit).Scan(&n)
	return n, s.wrap(err, "count report events")
}
