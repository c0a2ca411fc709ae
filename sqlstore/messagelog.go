package sqlstore

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/mailroom/mailroom"
)

// deliveryColumns are a whole message row, content and raw bytes
// included: what delivery needs (messageRow, scanMessage) and the email
// log must never read.
const deliveryColumns = `id, account_id, status, subject, category, domain, idempotency_key, envelope, content, created_at, scheduled_at, raw, require_tls,
	track_opens, track_clicks`

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
const logColumns = `id, account_id, status, subject, category, domain, idempotency_key, envelope, created_at, scheduled_at, require_tls,
	track_opens, track_clicks`

// messageRow reads one whole message (content and raw bytes) by a WHERE
// clause, for delivery, on the read pool.
func (s *Store) messageRow(ctx context.Context, where string, args ...any) (*mailroom.Message, []byte, error) {
	var raw []byte
	refs := s.accountRefs()
	m, err := refs.scanMessage(s.read.QueryRowContext(ctx, `SELECT `+deliveryColumns+` FROM messages `+where, args...), &raw)
	if err == nil {
		err = s.resolve(ctx, nil, refs)
	}
	return m, raw, err
}

// scanMessage reads a row of deliveryColumns; raw receives the signed
// bytes, or nil drops them.
func (r *accountRefs) scanMessage(row scanner, raw *[]byte) (*mailroom.Message, error) {
	var m mailroom.Message
	var status, category, envelope, content string
	var key sql.NullString
	var created int64
	var scheduled sql.NullInt64
	var rawDst any = new([]byte)
	if raw != nil {
		rawDst = raw
	}
	if err := row.Scan(messageColumn(&m.ID), r.column(&m.AccountID), &status, &m.Subject, &category, &m.Domain, &key,
		&envelope, &content, &created, &scheduled, rawDst, &m.RequireTLS, &m.Tracking.Opens, &m.Tracking.Clicks); err != nil {
		return nil, err
	}
	if err := decodeEnvelope(envelope, &m); err != nil {
		return nil, fmt.Errorf("message %s envelope: %w", m.ID, err)
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
func (r *accountRefs) scanLogMessage(row scanner) (*mailroom.Message, error) {
	var m mailroom.Message
	var status, category, envelope string
	var key sql.NullString
	var created int64
	var scheduled sql.NullInt64
	if err := row.Scan(messageColumn(&m.ID), r.column(&m.AccountID), &status, &m.Subject, &category, &m.Domain, &key, &envelope,
		&created, &scheduled, &m.RequireTLS, &m.Tracking.Opens, &m.Tracking.Clicks); err != nil {
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
	return s.message(ctx, accountID, id, true)
}

// MessageContent returns an account's message as Message does, without
// its timeline, and with its content (bodies, headers, Message-ID header;
// not its attachments), read in the same snapshot.
func (s *Store) MessageContent(ctx context.Context, accountID, id string) (*mailroom.Message, error) {
	m, _, err := s.messageWith(ctx, accountID, id, false, true)
	return m, err
}

// message is Message, with its timeline or (a report's reading) without.
func (s *Store) message(ctx context.Context, accountID, id string, timeline bool) (m *mailroom.Message, events []*mailroom.Event, err error) {
	return s.messageWith(ctx, accountID, id, timeline, false)
}

// messageWith is Message, with its timeline or without, and with its
// content or without.
func (s *Store) messageWith(ctx context.Context, accountID, id string, timeline, content bool) (m *mailroom.Message, events []*mailroom.Event, err error) {
	account, err := s.accountKey(ctx, nil, accountID)
	if err != nil {
		return nil, nil, err
	}
	refs := s.accountRefs()
	err = s.inSnapshot(ctx, func(tx *sql.Tx) error {
		m, err = refs.scanLogMessage(tx.QueryRowContext(ctx, `SELECT `+logColumns+` FROM messages
			WHERE id = $1 AND account_id = $2`, messageKey(id), account))
		if errors.Is(err, sql.ErrNoRows) {
			return mailroom.Errorf(mailroom.ECodeNotFound, "No message %q in this account.", id)
		}
		if err != nil {
			return s.wrap(err, "find message")
		}
		rows, err := tx.QueryContext(ctx, `SELECT `+recipientColumns+` FROM recipients WHERE message_id = $1 ORDER BY position`, messageKey(id))
		if err != nil {
			return s.wrap(err, "message recipients")
		}
		if m.Recipients, err = collect(rows, scanRecipient); err != nil {
			return s.wrap(err, "message recipients")
		}
		if timeline {
			if events, err = s.timeline(ctx, tx, refs, m); err != nil {
				return err
			}
			// The log's one message shows a click-tracked message's
			// links with their clicks.
			if m.Tracking.Clicks {
				if m.Links, err = s.trackedLinks(ctx, tx, id); err != nil {
					return err
				}
			}
		}
		if content {
			var c string
			if err := tx.QueryRowContext(ctx, `SELECT content FROM messages WHERE id = $1`, messageKey(id)).Scan(&c); err != nil {
				return s.wrap(err, "message content")
			}
			if err := decodeBodies(c, m); err != nil {
				return fmt.Errorf("message %s content: %w", m.ID, err)
			}
		}
		return s.resolve(ctx, tx, refs)
	})
	if err != nil {
		return nil, nil, err
	}
	return m, events, nil
}

// timeline reads m's newest mailroom.MaxTimelineEvents events (one more,
// to learn whether there are older ones) by events_by_message, newest
// first, and returns them oldest first; when there are older ones,
// m.OlderEventsCursor is the ListEvents cursor that follows the oldest
// returned, as a page of ListEvents filtered by the message would end.
func (s *Store) timeline(ctx context.Context, tx *sql.Tx, refs *accountRefs, m *mailroom.Message) ([]*mailroom.Event, error) {
	rows, err := tx.QueryContext(ctx, `SELECT `+eventColumns+` FROM events WHERE message_id = $1 ORDER BY id DESC LIMIT $2`,
		messageKey(m.ID), mailroom.MaxTimelineEvents+1)
	if err != nil {
		return nil, s.wrap(err, "message events")
	}
	events, err := collect(rows, refs.scanEvent)
	if err != nil {
		return nil, s.wrap(err, "message events")
	}
	events, m.OlderEventsCursor = trimPage(events, mailroom.MaxTimelineEvents, func(e *mailroom.Event) cursor {
		return cursor{at: micros(e.CreatedAt), id: e.ID}
	})
	slices.Reverse(events)
	// The message is at hand: its events' data is completed from it,
	// not from a join.
	sum := m.Summary()
	for _, e := range events {
		completeEmailEvent(e, sum)
	}
	return events, nil
}

// recipientColumns are a recipient as the log shows it (scanRecipient).
const recipientColumns = `message_id, address, kind, status, attempts, last_attempt_at, next_attempt_at, smtp_code,
	smtp_response, mx, unencrypted, site, last_deferral_reason, tls, opens, clicks`

func scanRecipient(row scanner) (*mailroom.Recipient, error) {
	var r mailroom.Recipient
	var kind, status, reason string
	var last, next, code sql.NullInt64
	var resp, mx, tls sql.NullString
	if err := row.Scan(messageColumn(&r.MessageID), &r.Address, &kind, &status, &r.Attempts, &last, &next, &code, &resp, &mx,
		&r.Unencrypted, &r.Site, &reason, &tls, &r.Opens, &r.Clicks); err != nil {
		return nil, err
	}
	var err error
	if r.TLS, err = scanTLS(tls); err != nil {
		return nil, err
	}
	r.LastDeferralReason = mailroom.DeferralReason(reason)
	r.Kind, r.Status = mailroom.RecipientKind(kind), mailroom.RecipientStatus(status)
	r.LastAttemptAt, r.NextAttemptAt = fromNullMicros(last), fromNullMicros(next)
	r.SMTPCode, r.SMTPResponse, r.MX = int(code.Int64), resp.String, mx.String
	return &r, nil
}

// ListMessages lists an account's messages newest first, filtered, without
// their content (as Message), doing work in proportion to the page, not to
// the matches (issue 17).
//
// Every indexed filter has an index that leads with the account and the
// filter's value and then orders by message id, which sorts by creation
// time: status (messages_by_status), category (messages_by_category,
// migration 00012), from in any case
// (messages_by_from_key), template (messages_by_template[_name]), to
// (recipients_by_address), each tag (message_tags_lookup), and none
// (messages_by_account). One of them drives the query, walked newest first
// from the cursor and bounded by since/until turned into id bounds
// (logKeyBound): the page is its first matches. The others are checked per
// row, the messages' columns in a form no index serves (so that neither
// planner walks a second index) and the tags and recipient by their
// primary keys, in scalar subqueries (PostgreSQL turns an EXISTS into a
// semi-join, which it may run as a hash of every match). The driver is the candidate with the fewest entries in
// that id range, counted up to logProbeLimit each (a bounded index read),
// so that a selective filter drives a broad one; a count of 0 answers an
// empty page at once.
func (s *Store) ListMessages(ctx context.Context, accountID string, f mailroom.MessageFilter, p mailroom.Page) ([]*mailroom.Message, string, error) {
	account, err := s.accountKey(ctx, nil, accountID)
	if err != nil {
		return nil, "", err
	}
	lp, err := newLogPlan(account, f, p)
	if err != nil {
		return nil, "", err
	}
	var out []*mailroom.Message
	refs := s.accountRefs()
	err = s.inSnapshot(ctx, func(tx *sql.Tx) error {
		if s.dialect.Reads.CustomPlans != "" {
			if _, err := tx.ExecContext(ctx, s.dialect.Reads.CustomPlans); err != nil {
				return s.wrap(err, "list messages")
			}
		}
		driver := 0
		if len(lp.candidates) > 1 {
			best, bestLast := -1, ""
			for i := range lp.candidates {
				var n int
				var last sql.NullString
				q, args := lp.probe(i, s.dialect)
				if err := tx.QueryRowContext(ctx, q, args...).Scan(&n, &last); err != nil {
					return s.wrap(err, "count log filter")
				}
				if n == 0 {
					return nil // one filter matches nothing in the range
				}
				// The fewest entries; among candidates with at least
				// logProbeLimit, the sparsest: the one whose last counted
				// entry is furthest from where the walk starts (the
				// oldest, or the newest when walking oldest first).
				if best < 0 || n < best || n == logProbeLimit && best == logProbeLimit && lp.further(last.String, bestLast) {
					driver, best, bestLast = i, n, last.String
				}
			}
		}
		q, args := lp.list(driver, s.dialect)
		rows, err := tx.QueryContext(ctx, q, args...)
		if err != nil {
			return s.wrap(err, "list messages")
		}
		if out, err = collect(rows, refs.scanLogMessage); err != nil {
			return s.wrap(err, "list messages")
		}
		if err := s.resolve(ctx, tx, refs); err != nil {
			return err
		}
		return s.attachRecipients(ctx, tx, out)
	})
	if err != nil {
		return nil, "", err
	}
	out, next := trimPage(out, lp.limit, func(x *mailroom.Message) cursor { return cursor{at: micros(x.CreatedAt), id: x.ID} })
	return out, next, nil
}

// LogQuery is one statement ListMessages may run, for the tests that hold
// its query plans (storetest's TestQueriesUseTheirIndexes).
type LogQuery struct {
	// Index is the index that must serve the statement.
	Index string
	SQL   string
	Args  []any
}

// LogQueries returns the statements ListMessages may run for f and p: the
// count of each candidate driver (none when there is one candidate) and
// the list driven by each.
func (s *Store) LogQueries(ctx context.Context, accountID string, f mailroom.MessageFilter, p mailroom.Page) (probes, lists []LogQuery, err error) {
	account, err := s.accountKey(ctx, nil, accountID)
	if err != nil {
		return nil, nil, err
	}
	lp, err := newLogPlan(account, f, p)
	if err != nil {
		return nil, nil, err
	}
	for i, c := range lp.candidates {
		if len(lp.candidates) > 1 {
			q, args := lp.probe(i, s.dialect)
			probes = append(probes, LogQuery{c.index, q, args})
		}
		q, args := lp.list(i, s.dialect)
		lists = append(lists, LogQuery{c.index, q, args})
	}
	return probes, lists, nil
}

// logProbeLimit bounds the entries a candidate driver's count reads.
const logProbeLimit = 1000

// A logDriver is an indexed filter of the log, served by index: on table
// (recipients, message_tags, aliased d, keyed by message_id) or, when
// table is "", on messages (aliased m) by cond, as its index has it (other
// is the form no index serves); no cond is the account's whole log.
type logDriver struct {
	index, table, cond, other string
	args                      []any
}

// logPlan is a log query's filters made into candidate drivers and a
// range of message keys (nil: no bound; upper excluded, lower included),
// for the account of key account, walked newest first, or oldest first
// when asc.
type logPlan struct {
	account      int64
	f            mailroom.MessageFilter
	limit        int
	asc          bool
	upper, lower []byte
	candidates   []logDriver
}

func newLogPlan(account int64, f mailroom.MessageFilter, p mailroom.Page) (*logPlan, error) {
	after, err := parseIDCursor(p.Cursor, mailroom.PrefixMessage)
	if err != nil {
		return nil, err
	}
	lp := &logPlan{account: account, f: f, limit: pageLimit(p), asc: f.OldestFirst}
	var v mailroom.Validator
	for _, b := range []struct{ field, id string }{{"olderThan", f.OlderThan}, {"newerThan", f.NewerThan}} {
		if b.id != "" && !mailroom.IsID(b.id, mailroom.PrefixMessage) {
			v.Add(b.field, "must be a message id (msg_…)")
		}
	}
	if err := v.Err(); err != nil {
		return nil, err
	}
	// The id range: past the cursor in the walk's direction, and within
	// since/until and the id bounds.
	below := func(b []byte) {
		if lp.upper == nil || bytes.Compare(b, lp.upper) < 0 {
			lp.upper = b
		}
	}
	above := func(b []byte) {
		if lp.lower == nil || bytes.Compare(b, lp.lower) > 0 {
			lp.lower = b
		}
	}
	switch {
	case after.id == "":
	case lp.asc:
		above(keyAfter(messageKey(after.id)))
	default:
		below(messageKey(after.id))
	}
	if f.OlderThan != "" {
		below(messageKey(f.OlderThan))
	}
	if f.NewerThan != "" {
		above(keyAfter(messageKey(f.NewerThan)))
	}
	if f.Until != nil {
		below(logKeyBound(micros(*f.Until)-1, 1))
	}
	if f.Since != nil {
		above(logKeyBound(micros(*f.Since), 0))
	}
	add := func(d logDriver) { lp.candidates = append(lp.candidates, d) }
	if f.To != "" {
		// Addresses are ASCII (validation refuses non-ASCII local parts and
		// turns domains into A-labels), so lower() is the AddressKey.
		add(logDriver{index: "recipients_by_address", table: "recipients", cond: "lower(d.address) = ?", args: []any{mailroom.AddressKey(f.To)}})
	}
	for _, t := range f.Tags {
		add(logDriver{index: "message_tags_lookup", table: "message_tags", cond: "d.key = ? AND d.value = ?", args: []any{t.Key, t.Value}})
	}
	if f.Status != "" {
		add(logDriver{index: "messages_by_status", cond: "m.status = ?", other: "m.status || '' = ?", args: []any{string(f.Status)}})
	}
	if f.From != "" {
		// As for to above: lower() is the AddressKey, served by
		// messages_by_from_key (migration 00007).
		add(logDriver{index: "messages_by_from_key", cond: "lower(m.from_address) = ?", other: "lower(m.from_address) || '' = ?", args: []any{mailroom.AddressKey(f.From)}})
	}
	switch {
	case strings.HasPrefix(f.Template, mailroom.PrefixTemplate):
		add(logDriver{index: "messages_by_template", cond: "m.template_id = ?", other: "m.template_id || '' = ?", args: []any{f.Template}})
	case f.Template != "":
		// The name the template had when the message was sent: a
		// deleted template's messages are still found by it.
		add(logDriver{index: "messages_by_template_name", cond: "m.template_name = ?", other: "m.template_name || '' = ?", args: []any{f.Template}})
	}
	switch f.Event {
	case mailroom.EngagementOpened:
		// Set with the first open counted (RecordEngagement), served by
		// the partial index of the messages that were (migration 00028).
		add(logDriver{index: "messages_opened", cond: "m.opened = 1", other: "m.opened + 0 = 1"})
	case mailroom.EngagementClicked:
		add(logDriver{index: "messages_clicked", cond: "m.clicked = 1", other: "m.clicked + 0 = 1"})
	case "":
	default:
		v.Add("event", "must be opened or clicked")
		return nil, v.Err()
	}
	if f.Category != "" {
		add(logDriver{index: "messages_by_category", cond: "m.category = ?", other: "m.category || '' = ?", args: []any{string(f.Category)}})
	}
	if len(lp.candidates) == 0 {
		add(logDriver{index: "messages_by_account"})
	}
	return lp, nil
}

// probe counts candidate i's entries in the id range, newest first, up to
// logProbeLimit, and returns the last one counted.
func (lp *logPlan) probe(i int, dialect Dialect) (string, []any) {
	c := lp.candidates[i]
	q := logQuery{args: []any{lp.account}}
	table, key := "messages m"+dialect.indexedBy(c.index), "m.id"
	if c.table != "" {
		table, key = c.table+" d"+dialect.indexedBy(c.index), "d.message_id"
		q.add("d.account_id = $1 AND "+c.cond, c.args...)
	} else {
		q.add("m.account_id = $1 AND "+c.cond, c.args...)
	}
	lp.idRange(&q, key)
	last := dialect.minKey("k")
	if lp.asc {
		last = dialect.maxKey("k")
	}
	return `SELECT count(*), ` + last + ` FROM (SELECT ` + key + ` AS k FROM ` + table + ` WHERE ` + strings.Join(q.where, " AND ") +
		fmt.Sprintf(` ORDER BY %s %s LIMIT %d) p`, key, lp.direction(), logProbeLimit), q.args
}

// direction is the SQL order of the walk.
func (lp *logPlan) direction() string {
	if lp.asc {
		return "ASC"
	}
	return "DESC"
}

// further says whether a probe's last counted key a lies further along
// the walk than b: older newest first, newer oldest first.
func (lp *logPlan) further(a, b string) bool {
	if lp.asc {
		return a > b
	}
	return a < b
}

func (lp *logPlan) idRange(q *logQuery, key string) {
	if lp.upper != nil {
		q.add(key+" < ?", lp.upper)
	}
	if lp.lower != nil {
		q.add(key+" >= ?", lp.lower)
	}
}

// list is the page's query driven by candidate driver.
func (lp *logPlan) list(driver int, dialect Dialect) (string, []any) {
	f := lp.f
	q := logQuery{args: []any{lp.account}}
	d := lp.candidates[driver]
	from, key := "messages m"+dialect.indexedBy(d.index), "m.id"
	switch {
	case d.table != "":
		// CROSS JOIN keeps SQLite's join order: the driver outside.
		from, key = d.table+" d"+dialect.indexedBy(d.index)+" CROSS JOIN messages m", "d.message_id"
		q.add("d.account_id = $1 AND "+d.cond, d.args...)
		q.add("m.id = d.message_id AND m.account_id = $1")
	case d.cond != "":
		q.add("m.account_id = $1 AND "+d.cond, d.args...)
	default:
		q.add("m.account_id = $1")
	}
	lp.idRange(&q, key)
	if key != "m.id" {
		// The same range on messages: PostgreSQL does not carry a range
		// across m.id = d.message_id, and in a merge join walked messages
		// from the newest down to the cursor (338 ms at a million, half
		// way down).
		lp.idRange(&q, "m.id")
	}
	for i, c := range lp.candidates {
		switch {
		case i == driver || c.cond == "":
		case c.table == "recipients":
			q.add("(SELECT 1 FROM recipients x WHERE x.message_id = m.id AND lower(x.address) = ? LIMIT 1) IS NOT NULL", c.args...)
		case c.table == "message_tags":
			q.add("(SELECT 1 FROM message_tags x WHERE x.account_id = m.account_id AND x.key = ? AND x.value = ? AND x.message_id = m.id) IS NOT NULL", c.args...)
		default:
			q.add(c.other, c.args...)
		}
	}
	// The exact times (the id bounds are to the millisecond), in a form
	// that no index on created_at serves.
	if f.Since != nil {
		q.add("m.created_at + 0 >= ?", micros(*f.Since))
	}
	if f.Until != nil {
		q.add("m.created_at + 0 < ?", micros(*f.Until))
	}
	q.args = append(q.args, lp.limit+1)
	return `SELECT ` + logColumnsOf("m") + ` FROM ` + from + ` WHERE ` + strings.Join(q.where, " AND ") +
		fmt.Sprintf(` ORDER BY %s %s LIMIT $%d`, key, lp.direction(), len(q.args)), q.args
}

// logQuery gathers a WHERE clause whose ? become numbered parameters.
type logQuery struct {
	where []string
	args  []any
}

func (q *logQuery) add(cond string, args ...any) {
	for _, a := range args {
		q.args = append(q.args, a)
		cond = strings.Replace(cond, "?", fmt.Sprintf("$%d", len(q.args)), 1)
	}
	q.where = append(q.where, cond)
}

// logKeyBound is the least message key of the millisecond holding the
// time at (microseconds) plus add milliseconds: a message's id is a ULID of
// the instant it was created (NewID(PrefixMessage, now) beside CreatedAt =
// now), so created_at >= t is within key >= logKeyBound(t, 0) and
// created_at <= t within key < logKeyBound(t, 1). The exact comparison on
// created_at stays in the query; the bound lets the index range serve it.
func logKeyBound(at int64, add int64) []byte {
	ms := at/1000 + add
	if at%1000 < 0 {
		ms-- // floor, for times before 1970
	}
	return timeKey(ms)
}

// keyAfter is the least key above k (k plus one, as a number): key > k
// is key >= keyAfter(k), the form the log's id range takes. Above the
// greatest key is noKey, which no stored key reaches.
func keyAfter(k []byte) []byte {
	out := slices.Clone(k)
	for i := len(out) - 1; i >= 0; i-- {
		out[i]++
		if out[i] != 0 {
			return out
		}
	}
	return noKey
}

// logColumnsOf is logColumns of the table aliased alias.
func logColumnsOf(alias string) string {
	return alias + "." + strings.ReplaceAll(logColumns, ", ", ", "+alias+".")
}

// listWithRecipients reads the messages a query of logColumns lists and
// their recipients, in one snapshot: a message's status and its
// recipients' states agree.
func (s *Store) listWithRecipients(ctx context.Context, query string, args ...any) (out []*mailroom.Message, err error) {
	refs := s.accountRefs()
	err = s.inSnapshot(ctx, func(tx *sql.Tx) error {
		rows, err := tx.QueryContext(ctx, query, args...)
		if err != nil {
			return s.wrap(err, "list messages")
		}
		if out, err = collect(rows, refs.scanLogMessage); err != nil {
			return s.wrap(err, "list messages")
		}
		if err := s.resolve(ctx, tx, refs); err != nil {
			return err
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
		args[i] = messageKey(m.ID)
	}
	// In the primary key's order, with a LIMIT no page can reach (a
	// message has at most MaxRecipients), and sorted by position here:
	// PostgreSQL, planning on the statistics of empty tables (autovacuum
	// off), guessed 0.5% of the table for each id and read all of it to
	// sort a page's recipients by position, 100 ms at a million messages
	// (issue 17); the LIMIT makes it walk the index, whatever it guesses.
	// (A message stored with more, by an SMTP listener configured for
	// more, makes the limit reached: the query runs again without it.)
	limit := len(ms) * mailroom.MaxRecipients
	positions := map[*mailroom.Recipient]int{}
	var rs []*mailroom.Recipient
	for {
		query := `SELECT position, ` + recipientColumns + ` FROM recipients WHERE message_id IN (` + placeholders(1, len(ms)) + `)
			ORDER BY message_id, address`
		if limit > 0 {
			query += fmt.Sprintf(" LIMIT %d", limit)
		}
		rows, err := tx.QueryContext(ctx, query, args...)
		if err != nil {
			return s.wrap(err, "list recipients")
		}
		rs, err = collect(rows, func(row scanner) (*mailroom.Recipient, error) {
			var pos int
			r, err := scanRecipient(prefixScanner{row, &pos})
			positions[r] = pos
			return r, err
		})
		if err != nil {
			return s.wrap(err, "list recipients")
		}
		if limit == 0 || len(rs) < limit {
			break
		}
		limit = 0
	}
	for _, r := range rs {
		byID[r.MessageID].Recipients = append(byID[r.MessageID].Recipients, r)
	}
	for _, m := range ms {
		slices.SortFunc(m.Recipients, func(a, b *mailroom.Recipient) int { return positions[a] - positions[b] })
	}
	return nil
}

// prefixScanner scans a row's first column into first and the rest as
// the scanner it wraps would.
type prefixScanner struct {
	row   scanner
	first any
}

func (p prefixScanner) Scan(dest ...any) error {
	return p.row.Scan(append([]any{p.first}, dest...)...)
}
