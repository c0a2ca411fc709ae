package sqlstore

import (
	"context"
	"database/sql"
	"time"

	"github.com/mailroom/mailroom"
)

// writeAcceptArrays writes a settled batch in one statement, each table's
// rows passed as one array a column (PostgreSQL's unnest): whatever the
// batch's size, an accept group costs the suppression check and this one
// round trip inside its transaction, where the multi-row statements cost
// about eight (issue 17: a statement's round trip and its execution in
// PostgreSQL were most of an accept's cost there). The recipients, events,
// tags and webhook deliveries of a message skipped for its idempotency key
// are left out by the statement itself (WHERE … IN inserted). It returns
// the ids of the messages inserted.
func (s *Store) writeAcceptArrays(ctx context.Context, tx *sql.Tx, b *acceptBatch) (map[string]bool, error) {
	var a acceptArrays
	for _, i := range b.insertOrder() {
		m := b.ms[i]
		account := b.accounts[i]
		a.addMessage(m, account, b.content[i], b.envelopes[i])
		due := micros(due(m))
		for j, r := range m.Recipients {
			a.addRecipient(m, account, r, j, due)
			a.addEvent(b.events[i][j], account, b.eventData[i][j])
		}
		for k, v := range m.Tags {
			a.tagMessage = append(a.tagMessage, messageKey(m.ID))
			a.tagAccount = append(a.tagAccount, account)
			a.tagKey = append(a.tagKey, k)
			a.tagValue = append(a.tagValue, v)
		}
	}
	inserted := map[string]bool{}
	err := s.eachRow(ctx, tx, acceptArraysStatement, a.args(), func(rows *sql.Rows) error {
		var id string
		if err := rows.Scan(messageColumn(&id)); err != nil {
			return err
		}
		inserted[id] = true
		return nil
	})
	return inserted, s.wrap(err, "insert messages")
}

// acceptArrays are a batch's rows, a slice a column, in the order of
// acceptArraysStatement's parameters. A nil pointer or slice is NULL. Ids
// are keys (idKey, and accounts' integer keys), but for the webhook
// deliveries' own columns, which keep the text.
type acceptArrays struct {
	// messages
	id                                      [][]byte
	account                                 []int64
	status, from, subject, category, domain []string
	key                                     []*string
	digest                                  [][]byte
	content, envelope                       []string
	createdAt                               []int64
	scheduledAt                             []*int64
	templateID, templateName                []*string
	raw                                     [][]byte
	requireTLS                              []bool // $40, added after the others
	trackOpens, trackClicks                 []bool // $41 and $42, added after it
	// recipients
	rcptMessage                  [][]byte
	rcptAddress                  []string
	rcptAccount                  []int64
	rcptKind                     []string
	rcptPosition                 []int64
	rcptStatus                   []string
	rcptQueuedAt                 []int64
	rcptDueAt, rcptNextAttemptAt []*int64
	// events, with the bit of their type among webhook subscriptions and
	// their ids as text, for the deliveries
	eventID                       [][]byte
	eventAccount                  []int64
	eventType, eventData          []string
	eventCreatedAt                []int64
	eventMessage                  [][]byte
	eventRecipient                []string
	eventBit                      []int64
	eventTextID, eventTextAccount []string
	// tags
	tagAccount       []int64
	tagKey, tagValue []string
	tagMessage       [][]byte
}

func (a *acceptArrays) addMessage(m *mailroom.Message, account int64, content, envelope string) {
	a.id = append(a.id, messageKey(m.ID))
	a.account = append(a.account, account)
	a.status = append(a.status, string(m.Status))
	a.from = append(a.from, m.From.Address)
	a.subject = append(a.subject, m.Subject)
	a.category = append(a.category, string(m.Category))
	a.domain = append(a.domain, m.Domain)
	a.key = append(a.key, stringOrNil(m.IdempotencyKey))
	a.digest = append(a.digest, keyedDigest(m))
	a.content = append(a.content, content)
	a.envelope = append(a.envelope, envelope)
	a.createdAt = append(a.createdAt, micros(m.CreatedAt))
	a.scheduledAt = append(a.scheduledAt, microsPtr(m.ScheduledAt))
	var templateID, templateName *string
	if m.Template != nil {
		templateID, templateName = &m.Template.ID, &m.Template.Name
	}
	a.templateID = append(a.templateID, templateID)
	a.templateName = append(a.templateName, templateName)
	// Nil stays NULL, never an empty blob, which delivery would send as
	// the message (writeAcceptRows).
	a.raw = append(a.raw, m.Raw)
	a.requireTLS = append(a.requireTLS, m.RequireTLS)
	a.trackOpens = append(a.trackOpens, m.Tracking.Opens)
	a.trackClicks = append(a.trackClicks, m.Tracking.Clicks)
}

func (a *acceptArrays) addRecipient(m *mailroom.Message, account int64, r *mailroom.Recipient, position int, due int64) {
	dueAt := &due
	if r.Status == mailroom.RecipientSuppressed {
		dueAt = nil
	}
	a.rcptMessage = append(a.rcptMessage, messageKey(m.ID))
	a.rcptAddress = append(a.rcptAddress, r.Address)
	a.rcptAccount = append(a.rcptAccount, account)
	a.rcptKind = append(a.rcptKind, string(r.Kind))
	a.rcptPosition = append(a.rcptPosition, int64(position))
	a.rcptStatus = append(a.rcptStatus, string(r.Status))
	a.rcptQueuedAt = append(a.rcptQueuedAt, due)
	a.rcptDueAt = append(a.rcptDueAt, dueAt)
	a.rcptNextAttemptAt = append(a.rcptNextAttemptAt, microsPtr(r.NextAttemptAt))
}

func (a *acceptArrays) addEvent(e *mailroom.Event, account int64, data string) {
	a.eventID = append(a.eventID, eventKey(e.ID))
	a.eventAccount = append(a.eventAccount, account)
	a.eventType = append(a.eventType, e.Type)
	a.eventData = append(a.eventData, data)
	a.eventCreatedAt = append(a.eventCreatedAt, micros(e.CreatedAt))
	a.eventMessage = append(a.eventMessage, messageKey(e.MessageID))
	a.eventRecipient = append(a.eventRecipient, e.Recipient)
	a.eventBit = append(a.eventBit, eventBit(e.Type))
	a.eventTextID = append(a.eventTextID, e.ID)
	a.eventTextAccount = append(a.eventTextAccount, e.AccountID)
}

func (a *acceptArrays) args() []any {
	return []any{
		a.id, a.account, a.status, a.from, a.subject, a.category, a.domain, a.key, a.digest, a.content,
		a.envelope, a.createdAt, a.scheduledAt, a.templateID, a.templateName, a.raw,
		a.rcptMessage, a.rcptAddress, a.rcptAccount, a.rcptKind, a.rcptPosition, a.rcptStatus, a.rcptQueuedAt,
		a.rcptDueAt, a.rcptNextAttemptAt,
		a.eventID, a.eventAccount, a.eventType, a.eventData, a.eventCreatedAt, a.eventMessage, a.eventRecipient,
		a.eventBit, a.eventTextID, a.eventTextAccount,
		a.tagAccount, a.tagKey, a.tagValue, a.tagMessage,
		a.requireTLS, a.trackOpens, a.trackClicks,
	}
}

// acceptArraysStatement is writeAcceptArrays' statement. Rows are inserted
// in the arrays' order (insertOrder's). The data-modifying
// WITH clauses all run; those after m see its RETURNING, so a message
// skipped by ON CONFLICT takes nothing else with it. A delivery goes to
// each enabled endpoint of the event's account that subscribes to its
// type, as fanOutMany writes them, with the event's and account's ids as
// text (the deliveries' columns keep the text).
const acceptArraysStatement = `WITH m AS (
	INSERT INTO messages (id, account_id, status, from_address, subject, category, domain,
		idempotency_key, request_digest, content, envelope, created_at, scheduled_at, template_id, template_name, raw, require_tls,
		track_opens, track_clicks)
	SELECT * FROM unnest($1::bytea[], $2::integer[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[],
		$8::text[], $9::bytea[], $10::text[], $11::text[], $12::bigint[], $13::bigint[], $14::text[], $15::text[], $16::bytea[],
		$40::boolean[], $41::boolean[], $42::boolean[])
	ON CONFLICT (account_id, idempotency_key) WHERE idempotency_key IS NOT NULL DO NOTHING
	RETURNING id
), r AS (
	INSERT INTO recipients (message_id, address, account_id, kind, position, status, queued_at, due_at, next_attempt_at)
	SELECT * FROM unnest($17::bytea[], $18::text[], $19::integer[], $20::text[], $21::bigint[], $22::text[], $23::bigint[],
		$24::bigint[], $25::bigint[]) AS v (message_id, address, account_id, kind, position, status, queued_at, due_at, next_attempt_at)
	WHERE v.message_id IN (SELECT id FROM m)
), ev AS (
	SELECT * FROM unnest($26::bytea[], $27::integer[], $28::text[], $29::text[], $30::bigint[], $31::bytea[], $32::text[],
		$33::bigint[], $34::text[], $35::text[]) AS v (id, account_id, type, data, created_at, message_id, recipient, bit,
		text_id, text_account_id)
	WHERE v.message_id IN (SELECT id FROM m)
), e AS (
	INSERT INTO events (` + eventColumns + `)
	SELECT ` + eventColumns + ` FROM ev
), t AS (
	INSERT INTO message_tags (account_id, key, value, message_id)
	SELECT * FROM unnest($36::integer[], $37::text[], $38::text[], $39::bytea[]) AS v (account_id, key, value, message_id)
	WHERE v.message_id IN (SELECT id FROM m)
), d AS (
	INSERT INTO webhook_deliveries (id, account_id, endpoint_id, event_id, attempts, due_at, created_at)
	SELECT ev.text_id || '.' || w.id, ev.text_account_id, w.id, ev.text_id, 0, ev.created_at, ev.created_at
	FROM ev JOIN webhook_endpoints w ON w.account_id = ev.text_account_id AND w.enabled AND (w.event_mask & ev.bit) <> 0
)
SELECT id FROM m`

func stringOrNil(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

func microsPtr(t *time.Time) *int64 {
	if t == nil {
		return nil
	}
	v := micros(*t)
	return &v
}
