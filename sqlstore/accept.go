package sqlstore

import (
	"bytes"
	"cmp"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/mailroom/mailroom"
)

// AcceptMessage stores m through the group committer: concurrent accepts
// share one transaction and one fsync, and each is answered after that
// commit (docs/design.md "How a message travels").
func (s *Store) AcceptMessage(ctx context.Context, m *mailroom.Message) (mailroom.AcceptResult, error) {
	out, err := s.AcceptMessages(ctx, []*mailroom.Message{m})
	if err != nil {
		return mailroom.AcceptResult{}, err
	}
	return out[0].Result, out[0].Err
}

// AcceptMessages stores a batch as one job of the group committer: one
// transaction, written with multi-row statements (insertRows), so that a
// batch of 500 costs about as many statements as a single send on
// PostgreSQL, where each statement is a round trip. The rows are encoded,
// and the accounts' keys found, before the job runs: on SQLite the job
// holds the only writer.
func (s *Store) AcceptMessages(ctx context.Context, ms []*mailroom.Message) ([]mailroom.AcceptOutcome, error) {
	batch, err := newAcceptBatch(ms)
	if err != nil {
		return nil, err
	}
	for i, m := range ms {
		if batch.accounts[i], err = s.writtenAccountKey(ctx, nil, m.AccountID); err != nil {
			return nil, err
		}
	}
	aj := &acceptJob{batch: batch}
	err = s.committer.submit(ctx, &job{accept: aj, run: func(ctx context.Context, tx *sql.Tx) error {
		// The job may run twice (alone, after its group failed): each run
		// starts from nothing.
		var err error
		aj.out, err = s.acceptAll(ctx, tx, batch)
		return err
	}})
	return aj.out, err
}

// acceptJob is an accept waiting for the committer, and its answer.
type acceptJob struct {
	batch *acceptBatch
	out   []mailroom.AcceptOutcome
}

// mergeAccepts writes the accepts of several jobs as one batch: concurrent
// single sends then cost a few multi-row statements together, as a batch
// does, not a few statements each.
func (s *Store) mergeAccepts(ctx context.Context, tx *sql.Tx, jobs []*job) error {
	all := &acceptBatch{}
	for _, j := range jobs {
		b := j.accept.batch
		all.ms = append(all.ms, b.ms...)
		all.accounts = append(all.accounts, b.accounts...)
		all.content = append(all.content, b.content...)
		all.envelopes = append(all.envelopes, b.envelopes...)
		all.events = append(all.events, b.events...)
		all.eventData = append(all.eventData, b.eventData...)
	}
	out, err := s.acceptAll(ctx, tx, all)
	if err != nil {
		return err
	}
	for _, j := range jobs {
		n := len(j.accept.batch.ms)
		j.accept.out, out = out[:n], out[n:]
	}
	return nil
}

// acceptBatch is a batch of messages encoded for their rows.
type acceptBatch struct {
	ms []*mailroom.Message
	// accounts[i] is ms[i]'s account's key.
	accounts           []int64
	content, envelopes []string
	// events[i][j] is the first event of ms[i]'s recipient j, made ahead
	// of the transaction; acceptAll sets its type.
	events [][]*mailroom.Event
	// eventData[i][j] is events[i][j]'s data as its row keeps it
	// (storedEventData); settle changes an event's type, never its data.
	eventData [][]string
}

func newAcceptBatch(ms []*mailroom.Message) (*acceptBatch, error) {
	b := &acceptBatch{ms: ms, accounts: make([]int64, len(ms)), content: make([]string, len(ms)), envelopes: make([]string, len(ms)),
		events: make([][]*mailroom.Event, len(ms)), eventData: make([][]string, len(ms))}
	for i, m := range ms {
		// The email log turns since/until into bounds on the key
		// (logKeyBound): a message whose id is not of its creation's
		// millisecond would fall outside them. (A ULID's first 6 bytes
		// are its millisecond.)
		if !bytes.Equal(messageKey(m.ID)[:6], logKeyBound(micros(m.CreatedAt), 0)[:6]) {
			return nil, fmt.Errorf("message %s: the id is not of its creation time %s", m.ID, m.CreatedAt.Format(time.RFC3339Nano))
		}
		firstEvent := mailroom.EventEmailQueued
		if m.ScheduledAt != nil {
			firstEvent = mailroom.EventEmailScheduled
		}
		summary := m.Summary()
		for _, r := range m.Recipients {
			e := mailroom.NewEmailEvent(summary, r, firstEvent, m.CreatedAt)
			b.events[i] = append(b.events[i], e)
			b.eventData[i] = append(b.eventData[i], storedEventData(e))
		}
		var err error
		if b.content[i], err = encodeContent(m); err != nil {
			return nil, err
		}
		// The addresses and tags, apart from content, for the email log,
		// which must not read content (migrations 00006, 00015).
		if b.envelopes[i], err = encodeEnvelope(m); err != nil {
			return nil, err
		}
	}
	return b, nil
}

// acceptAll writes a batch inside tx: the suppression check, then the
// messages, their recipients, tags, first events and webhook deliveries,
// as multi-row statements (writeAcceptRows) or, where the engine takes
// arrays, as one statement (writeAcceptArrays). A reused idempotency key is
// an outcome, not an error: it must not abort the transaction the others
// share.
func (s *Store) acceptAll(ctx context.Context, tx *sql.Tx, b *acceptBatch) ([]mailroom.AcceptOutcome, error) {
	suppressed, err := s.suppressedAmong(ctx, tx, b.ms)
	if err != nil {
		return nil, err
	}
	b.settle(suppressed)
	var inserted map[string]bool
	if s.dialect.Writes.ArrayInserts {
		inserted, err = s.writeAcceptArrays(ctx, tx, b)
	} else {
		inserted, err = s.writeAcceptRows(ctx, tx, b)
	}
	if err != nil {
		return nil, err
	}
	out := make([]mailroom.AcceptOutcome, len(b.ms))
	for i, m := range b.ms {
		if inserted[m.ID] {
			out[i].Result = mailroom.AcceptResult{MessageID: m.ID, Status: m.Status}
			continue
		}
		// The key was used before (by an earlier message of this batch,
		// perhaps): ON CONFLICT skipped the row, and its recipients, tags
		// and events with it.
		out[i].Result, out[i].Err = s.earlierMessage(ctx, tx, m, b.accounts[i])
		if out[i].Err != nil && !mailroom.IsCode(out[i].Err, mailroom.ECodeIdempotencyKeyReused) {
			return nil, out[i].Err
		}
	}
	return out, nil
}

// settle sets what the suppression list decides: each recipient's first
// state, each message's status and each first event's type. It is set
// either way, not only when suppressed: the job may run a second time,
// after a failed group, against a suppression list changed meanwhile.
func (b *acceptBatch) settle(suppressed suppressionReasons) {
	for i, m := range b.ms {
		firstState, firstEvent := mailroom.RecipientQueued, mailroom.EventEmailQueued
		if m.ScheduledAt != nil {
			firstState, firstEvent = mailroom.RecipientScheduled, mailroom.EventEmailScheduled
		}
		states := make([]mailroom.RecipientStatus, len(m.Recipients))
		for j, r := range m.Recipients {
			r.MessageID, r.Status, r.NextAttemptAt = m.ID, firstState, m.ScheduledAt
			b.events[i][j].Type = firstEvent
			// A test address suppressed@simulator.invalid is settled as
			// a listed address is, with no entry (docs/api.md "Test
			// addresses").
			if suppressed.stops(m.AccountID, r.Address, m.Category) || mailroom.SimulatedSuppressed(r.Address) {
				r.Status, r.NextAttemptAt = mailroom.RecipientSuppressed, nil
				b.events[i][j].Type = mailroom.EventEmailSuppressed
			}
			states[j] = r.Status
		}
		m.Status = mailroom.DeriveMessageStatus(states)
	}
}

// insertOrder is the order in which to insert b's messages: by account and
// idempotency key, so that concurrent transactions inserting the same keys
// (a client retrying a batch while the first try is still being written)
// take their unique index entries in one order, and wait for one another
// instead of deadlocking, which PostgreSQL would break only after a second,
// again and again under load.
func (b *acceptBatch) insertOrder() []int {
	order := make([]int, len(b.ms))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(i, j int) int {
		return cmp.Or(strings.Compare(b.ms[i].AccountID, b.ms[j].AccountID),
			strings.Compare(b.ms[i].IdempotencyKey, b.ms[j].IdempotencyKey))
	})
	return order
}

// due is when m's recipients first come due: now, or when scheduled.
func due(m *mailroom.Message) time.Time {
	if m.ScheduledAt != nil {
		return *m.ScheduledAt
	}
	return m.CreatedAt
}

// keyedDigest is m's request digest when it has an idempotency key, and
// NULL when not: only a retry under the key compares it (migration 00015).
func keyedDigest(m *mailroom.Message) []byte {
	if m.IdempotencyKey == "" {
		return nil
	}
	return m.RequestDigest
}

// nullable is v, or nil (NULL) when it is v's zero value.
func nullable[T comparable](v T) any {
	var zero T
	if v == zero {
		return nil
	}
	return v
}

// writeAcceptRows writes a settled batch with multi-row statements: the
// messages first, then the rows of those inserted. It returns the ids of
// the messages inserted.
func (s *Store) writeAcceptRows(ctx context.Context, tx *sql.Tx, b *acceptBatch) (map[string]bool, error) {
	messageRows := make([]any, 0, len(b.ms)*messageInsert.width)
	for _, i := range b.insertOrder() {
		m := b.ms[i]
		var templateID, templateName, raw any
		if m.Raw != nil {
			// Signed at accept (SMTP submission): delivery sends these
			// bytes as they are (MessageForDelivery). Nil stays NULL,
			// never an empty blob, which would be sent as the message.
			raw = m.Raw
		}
		if m.Template != nil {
			templateID, templateName = m.Template.ID, m.Template.Name
		}
		messageRows = append(messageRows, messageKey(m.ID), b.accounts[i], string(m.Status), m.From.Address, m.Subject,
			string(m.Category), m.Domain, nullable(m.IdempotencyKey), keyedDigest(m), b.content[i], b.envelopes[i], micros(m.CreatedAt),
			microsOrNil(m.ScheduledAt), templateID, templateName, raw, m.RequireTLS, m.Tracking.Opens, m.Tracking.Clicks)
	}
	inserted := map[string]bool{}
	err := s.insertRows(ctx, tx, messageInsert, messageRows, func(rows *sql.Rows) error {
		var id string
		if err := rows.Scan(messageColumn(&id)); err != nil {
			return err
		}
		inserted[id] = true
		return nil
	})
	if err != nil {
		return nil, s.wrap(err, "insert messages")
	}

	var recipientRows, eventRows, tagRows []any
	var events []*mailroom.Event
	for i, m := range b.ms {
		if !inserted[m.ID] {
			continue
		}
		due := micros(due(m))
		for j, r := range m.Recipients {
			dueAt, e := any(due), b.events[i][j]
			if r.Status == mailroom.RecipientSuppressed {
				dueAt = nil
			}
			recipientRows = append(recipientRows, messageKey(m.ID), r.Address, b.accounts[i], string(r.Kind), j, string(r.Status),
				due, dueAt, microsOrNil(r.NextAttemptAt))
			eventRows = append(eventRows, eventRowWithData(e, b.accounts[i], b.eventData[i][j])...)
			events = append(events, e)
		}
		for k, v := range m.Tags {
			tagRows = append(tagRows, messageKey(m.ID), b.accounts[i], k, v)
		}
	}
	if err := s.insertRows(ctx, tx, recipientInsert, recipientRows, nil); err != nil {
		return nil, s.wrap(err, "insert recipients")
	}
	if err := s.insertRows(ctx, tx, eventInsert, eventRows, nil); err != nil {
		return nil, s.wrap(err, "insert events")
	}
	if err := s.insertRows(ctx, tx, tagInsert, tagRows, nil); err != nil {
		return nil, s.wrap(err, "insert tags")
	}
	if err := s.fanOutMany(ctx, tx, events); err != nil {
		return nil, err
	}
	return inserted, nil
}

// The multi-row statements of an accept.
var (
	messageInsert = multiInsert{
		head: `INSERT INTO messages (id, account_id, status, from_address, subject, category, domain,
			idempotency_key, request_digest, content, envelope, created_at, scheduled_at, template_id, template_name, raw, require_tls,
			track_opens, track_clicks) VALUES `,
		width: 19,
		tail:  ` ON CONFLICT (account_id, idempotency_key) WHERE idempotency_key IS NOT NULL DO NOTHING RETURNING id`,
	}
	recipientInsert = multiInsert{
		head:  `INSERT INTO recipients (message_id, address, account_id, kind, position, status, queued_at, due_at, next_attempt_at) VALUES `,
		width: 9,
	}
	eventInsert = multiInsert{head: `INSERT INTO events (` + eventColumns + `) VALUES `, width: len(eventRow(&mailroom.Event{}, 0))}
	tagInsert   = multiInsert{head: `INSERT INTO message_tags (message_id, account_id, key, value) VALUES `, width: 4}
)

// IdempotentMessage answers a retry from the message stored under key.
func (s *Store) IdempotentMessage(ctx context.Context, accountID, key string, digest []byte) (mailroom.AcceptResult, error) {
	var id, status string
	var stored []byte
	account, err := s.accountKey(ctx, nil, accountID)
	if err != nil {
		return mailroom.AcceptResult{}, err
	}
	err = s.readRow(ctx, `SELECT id, status, request_digest FROM messages
		WHERE account_id = $1 AND idempotency_key = $2`, account, key).Scan(messageColumn(&id), &status, &stored)
	if errors.Is(err, sql.ErrNoRows) {
		return mailroom.AcceptResult{}, mailroom.Errorf(mailroom.ECodeNotFound, "No message under this idempotency key.")
	}
	if err != nil {
		return mailroom.AcceptResult{}, s.wrap(err, "find idempotent message")
	}
	return idempotentAnswer(id, status, stored, digest)
}

// earlierMessage answers a send whose idempotency key the account (of
// key account) used before: a duplicate when the requests match, an error
// when they differ.
func (s *Store) earlierMessage(ctx context.Context, tx *sql.Tx, m *mailroom.Message, account int64) (mailroom.AcceptResult, error) {
	var id, status string
	var digest []byte
	err := s.txQueryRow(ctx, tx, `SELECT id, status, request_digest FROM messages
		WHERE account_id = $1 AND idempotency_key = $2`, account, m.IdempotencyKey).Scan(messageColumn(&id), &status, &digest)
	if err != nil {
		return mailroom.AcceptResult{}, s.wrap(err, "find idempotent message")
	}
	return idempotentAnswer(id, status, digest, m.RequestDigest)
}

func idempotentAnswer(id, status string, stored, digest []byte) (mailroom.AcceptResult, error) {
	return mailroom.KeyedMessage{ID: id, Status: mailroom.MessageStatus(status), RequestDigest: stored}.Answer(digest)
}

// IdempotentMessages reads the messages under keys, maxStatementRows keys
// a query.
func (s *Store) IdempotentMessages(ctx context.Context, accountID string, keys []string) (map[string]mailroom.KeyedMessage, error) {
	out := map[string]mailroom.KeyedMessage{}
	account, err := s.accountKey(ctx, nil, accountID)
	if err != nil {
		return nil, err
	}
	for len(keys) > 0 {
		n := min(len(keys), maxStatementRows)
		args := []any{account}
		for _, k := range keys[:n] {
			args = append(args, k)
		}
		keys = keys[n:]
		rows, err := s.read.QueryContext(ctx, `SELECT idempotency_key, id, status, request_digest FROM messages
			WHERE account_id = $1 AND idempotency_key IN (`+placeholders(2, n)+`)`, args...)
		if err != nil {
			return nil, s.wrap(err, "find idempotent messages")
		}
		for rows.Next() {
			var key, status string
			var k mailroom.KeyedMessage
			if err := rows.Scan(&key, messageColumn(&k.ID), &status, &k.RequestDigest); err != nil {
				rows.Close()
				return nil, s.wrap(err, "find idempotent messages")
			}
			k.Status = mailroom.MessageStatus(status)
			out[key] = k
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return nil, s.wrap(err, "find idempotent messages")
		}
	}
	return out, nil
}

// suppressionKey is an address of an account's suppression list.
type suppressionKey struct{ account, address string }

// suppressionReasons are the reasons of the entries of accounts'
// suppression lists, by account and address.
type suppressionReasons map[suppressionKey]mailroom.SuppressionReason

// stops says whether the account's list stops mail of category c to
// address: an unsubscribe stops marketing mail only
// (mailroom.SuppressionReason.Stops).
func (s suppressionReasons) stops(account, address string, c mailroom.Category) bool {
	reason, ok := s[suppressionKey{account, mailroom.AddressKey(address)}]
	return ok && reason.Stops(c)
}

// suppressedAmong returns the entries of the suppression lists of ms's
// accounts for their recipients, in one query per account and chunk of
// addresses.
func (s *Store) suppressedAmong(ctx context.Context, tx *sql.Tx, ms []*mailroom.Message) (suppressionReasons, error) {
	byAccount := map[string][]string{}
	for _, m := range ms {
		for _, r := range m.Recipients {
			byAccount[m.AccountID] = append(byAccount[m.AccountID], mailroom.AddressKey(r.Address))
		}
	}
	out := suppressionReasons{}
	for account, addresses := range byAccount {
		err := s.queryIn(ctx, tx, `SELECT address, reason FROM suppressions WHERE account_id = $1 AND address IN `,
			[]any{account}, addresses, func(rows *sql.Rows) error {
				var a, reason string
				if err := rows.Scan(&a, &reason); err != nil {
					return err
				}
				out[suppressionKey{account, a}] = mailroom.SuppressionReason(reason)
				return nil
			})
		if err != nil {
			return nil, s.wrap(err, "check suppressions")
		}
	}
	return out, nil
}
