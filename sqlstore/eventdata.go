package sqlstore

import (
	"bytes"
	"database/sql"
	"encoding/json"
	"fmt"
	"unicode/utf8"

	"github.com/mailroom/mailroom"
)

// What an event row keeps of an email event's data (docs/design.md "How a
// message is stored"). Each email event's data repeats its message's id,
// its recipient, and the message's from, subject and tags, about 200 bytes
// a row, which the message's row and the event's own message_id and
// recipient columns hold already; and an event is deleted with its message
// (DeleteExpiredMessages), so the message is there whenever the event is
// read. The row keeps the rest (mailroom.EmailEventDetail), written from
// the event's typed data (mailroom.Event.Email) with no JSON made and read
// again, and each reader puts the five back from the message
// (completeEmailEvent), so that what the API and webhooks show is what the
// data marshals to whole.

// storedEventData is e's data as its row keeps it. An email event made
// by mailroom.NewEmailEvent carries its data typed (e.Email), and its row
// keeps the detail alone, marshalled once here, when the reader's
// completeEmailEvent gives back, byte for byte, what the data marshals to
// whole: when the data's message id and recipient are e's own, its tags
// are not nil (NewEmailEvent writes a message without tags as {}), and
// every string in it is valid UTF-8 (json.Marshal writes a bad byte as
// \ufffd, which a reader would unmarshal to U+FFFD and write back as the
// character itself). Otherwise the row keeps the data whole, as the API
// shows it. (From, subject and tags are not checked against the message,
// which is not at hand here: NewEmailEvent takes them from it.) Any other
// event's data (e.Data) is kept as it is.
func storedEventData(e *mailroom.Event) string {
	d := e.Email
	if d == nil {
		return string(e.Data)
	}
	if e.MessageID == "" || d.MessageID != e.MessageID || d.Recipient != e.Recipient || d.Tags == nil || !validUTF8(d) {
		return string(d.JSON())
	}
	detail, err := json.Marshal(&d.EmailEventDetail)
	if err != nil {
		panic("marshal email event detail: " + err.Error()) // strings, ints and bools always marshal
	}
	return string(detail)
}

// validUTF8 reports whether every string of d is valid UTF-8.
func validUTF8(d *mailroom.EmailEventData) bool {
	for _, s := range []string{d.MessageID, d.Recipient, d.From, d.Subject, d.SMTPResponse, d.MX, d.BounceType, d.ReportText, d.Site, string(d.Reason)} {
		if !utf8.ValidString(s) {
			return false
		}
	}
	if en := d.Engagement; en != nil {
		for _, s := range []string{en.URL, en.UserAgent, en.IP} {
			if !utf8.ValidString(s) {
				return false
			}
		}
	}
	for k, v := range d.Tags {
		if !utf8.ValidString(k) || !utf8.ValidString(v) {
			return false
		}
	}
	return true
}

// storedEmailEventData reads an email event's data as stored, either form:
// a nil field is one the row does not hold.
type storedEmailEventData struct {
	MessageID *string            `json:"messageId"`
	Recipient *string            `json:"recipient"`
	From      *string            `json:"from"`
	Subject   *string            `json:"subject"`
	Tags      *map[string]string `json:"tags"`
	mailroom.EmailEventDetail
}

// completeEmailEvent fills in what e's stored data left out: its message
// id and recipient from e's columns, from, subject and tags from m, e's
// message. Only a row that holds none of the five is completed: every
// version wrote all five or (since storedEventData) none, so a row written
// whole, before events were stored lean, reads back as it was, byte for
// byte, and no migration rewrites the rows. Data of no email event, data
// that is no JSON object (as before, the API shows what is stored), and
// an event whose message is not at hand (nil m) are left as stored.
func completeEmailEvent(e *mailroom.Event, m *mailroom.MessageSummary) {
	if e.MessageID == "" || m == nil {
		return
	}
	var s storedEmailEventData
	if !bytes.HasPrefix(e.Data, []byte("{")) || json.Unmarshal(e.Data, &s) != nil ||
		s.MessageID != nil || s.Recipient != nil || s.From != nil || s.Subject != nil || s.Tags != nil {
		return
	}
	d := mailroom.EmailEventData{MessageID: e.MessageID, Recipient: e.Recipient, From: m.From, Subject: m.Subject, Tags: m.Tags,
		EmailEventDetail: s.EmailEventDetail}
	if d.Tags == nil {
		d.Tags = map[string]string{} // as mailroom.NewEmailEvent has it
	}
	if data, err := json.Marshal(d); err == nil { // (strings, ints and a map of strings: it always is)
		e.Data = data
	}
}

// withMessages wraps query, which selects eventColumns from events, to
// give each event's row what its message gives its data (NULL for an
// event of no message): the columns of scanEventOfMessage. The events are
// read as query has them, and each one's message by its primary key, for
// the rows query returns alone: a page's LIMIT inside, the join outside,
// so that however the planner reads the events (PostgreSQL, on the
// statistics of empty tables, may sort an account's events to page them)
// no more messages are read than the page has events. The rows come back
// in no particular order.
func withMessages(query string) string {
	return `SELECT ` + qualified("p", eventColumns) + `, m.from_address, m.subject, m.envelope FROM (` + query + `) p
		LEFT JOIN messages m ON m.id = p.message_id`
}

// scanEventOfMessage reads a row of withMessages: the event, its data
// completed from its message.
func (r *accountRefs) scanEventOfMessage(row scanner) (*mailroom.Event, error) {
	var from, subject, envelope sql.NullString
	e, err := r.scanEvent(suffixScanner{row, []any{&from, &subject, &envelope}})
	if err != nil || !envelope.Valid {
		return e, err
	}
	m := &mailroom.MessageSummary{ID: e.MessageID, From: from.String, Subject: subject.String}
	if m.Tags, err = envelopeTags(envelope.String); err != nil {
		return nil, fmt.Errorf("message %s envelope: %w", m.ID, err)
	}
	completeEmailEvent(e, m)
	return e, nil
}

// envelopeTags reads the tags alone of a message's envelope column.
func envelopeTags(envelope string) (map[string]string, error) {
	var e struct {
		Tags map[string]string `json:"tags"`
	}
	err := json.Unmarshal([]byte(envelope), &e)
	return e.Tags, err
}

// suffixScanner scans a row's last columns into rest and the others as the
// scanner it wraps would.
type suffixScanner struct {
	row  scanner
	rest []any
}

func (s suffixScanner) Scan(dest ...any) error {
	return s.row.Scan(append(dest, s.rest...)...)
}
