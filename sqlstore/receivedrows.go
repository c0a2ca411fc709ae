package sqlstore

import (
	"encoding/json"
	"fmt"
	"net/mail"
	"strings"

	"github.com/mailroom/mailroom"
)

// How a received message is kept in a row of received_messages
// (migration 00027). Received mail is anyone's bytes: its strings may hold
// invalid UTF-8 or NUL, which PostgreSQL refuses in a text column and
// SQLite keeps, so every string column is made valid text first
// (storedText); the JSON columns are json.Marshal's, which writes invalid
// UTF-8 as U+FFFD and a NUL as the escape \u0000, plain text to both
// engines. Both then give back the same message.

// receivedColumns are received_messages' columns but raw, which only
// ReceivedRaw reads.
const receivedColumns = `id, account_id, received_at, mail_from, recipients, recipient_keys, from_header, from_key,
	to_addrs, cc_addrs, subject, message_id, remote_ip, helo, authentication, headers, text_body, html_body,
	attachments, parse_problem, size`

// receivedRow is m's values in receivedColumns' order, then raw.
func receivedRow(m *mailroom.ReceivedMessage) ([]any, error) {
	raw := m.Raw
	if raw == nil {
		raw = []byte{}
	}
	auth := m.Authentication
	if auth.DKIMSignatures == nil {
		auth.DKIMSignatures = []mailroom.DKIMSignatureResult{}
	}
	headers := m.Headers
	if headers == nil {
		headers = []mailroom.ReceivedHeader{}
	}
	atts := m.Attachments
	if atts == nil {
		atts = []mailroom.ReceivedAttachment{}
	}
	var js [6]string
	for i, v := range []any{nonNil(m.Recipients), nonNil(m.To), nonNil(m.Cc), auth, headers, atts} {
		b, err := json.Marshal(v)
		if err != nil {
			return nil, fmt.Errorf("received message %s: %w", m.ID, err)
		}
		js[i] = string(b)
	}
	return []any{m.ID, m.AccountID, micros(m.ReceivedAt), storedText(m.MailFrom), js[0], recipientKeys(m.Recipients),
		storedText(m.From), addressKey(m.From), js[1], js[2], storedText(m.Subject), storedText(m.MessageID),
		storedText(m.RemoteIP), storedText(m.Helo), js[3], js[4], storedText(m.Text), storedText(m.HTML),
		js[5], storedText(m.ParseProblem), int64(len(raw)), raw}, nil
}

// scanReceived reads a row of receivedColumns.
func scanReceived(row scanner) (*mailroom.ReceivedMessage, error) {
	var m mailroom.ReceivedMessage
	var at int64
	var recipients, keys, fromKey, to, cc, auth, headers, atts string
	if err := row.Scan(&m.ID, &m.AccountID, &at, &m.MailFrom, &recipients, &keys, &m.From, &fromKey, &to, &cc,
		&m.Subject, &m.MessageID, &m.RemoteIP, &m.Helo, &auth, &headers, &m.Text, &m.HTML, &atts, &m.ParseProblem, &m.Size); err != nil {
		return nil, err
	}
	m.ReceivedAt = fromMicros(at)
	for _, c := range []struct {
		name, text string
		into       any
	}{{"recipients", recipients, &m.Recipients}, {"to", to, &m.To}, {"cc", cc, &m.Cc},
		{"authentication", auth, &m.Authentication}, {"headers", headers, &m.Headers}} {
		if err := json.Unmarshal([]byte(c.text), c.into); err != nil {
			return nil, fmt.Errorf("received message %s %s: %w", m.ID, c.name, err)
		}
	}
	var err error
	if m.Attachments, err = unmarshalAttachments(m.ID, atts); err != nil {
		return nil, err
	}
	m.Recipients, m.To, m.Cc = nonNil(m.Recipients), nonNil(m.To), nonNil(m.Cc)
	if m.Authentication.DKIMSignatures == nil {
		m.Authentication.DKIMSignatures = []mailroom.DKIMSignatureResult{}
	}
	if m.Headers == nil {
		m.Headers = []mailroom.ReceivedHeader{}
	}
	return &m, nil
}

// unmarshalAttachments reads a message's attachments column.
func unmarshalAttachments(id, list string) ([]mailroom.ReceivedAttachment, error) {
	out := []mailroom.ReceivedAttachment{}
	if err := json.Unmarshal([]byte(list), &out); err != nil {
		return nil, fmt.Errorf("received message %s attachments: %w", id, err)
	}
	return out, nil
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// storedText is s as a text column keeps it on both engines: invalid
// UTF-8 and NUL (which PostgreSQL refuses in text) become U+FFFD.
func storedText(s string) string {
	return strings.ReplaceAll(strings.ToValidUTF8(s, "\uFFFD"), "\x00", "\uFFFD")
}

// recipientKeys are the addresses in lower case, each between newlines
// (which no address holds), so that a recipient is found whole with LIKE
// '%\n' || address || '\n%'.
func recipientKeys(addrs []string) string {
	var b strings.Builder
	b.WriteString("\n")
	for _, a := range addrs {
		b.WriteString(strings.ToLower(storedText(strings.TrimSpace(a))) + "\n")
	}
	return b.String()
}

// addressKey is the address of a From field ("Ann <ann@example.com>" or a
// bare address) in lower case, what the from filter compares; a field
// that does not parse is compared whole.
func addressKey(from string) string {
	from = storedText(strings.TrimSpace(from))
	if a, err := mail.ParseAddress(from); err == nil {
		return strings.ToLower(a.Address)
	}
	return strings.ToLower(from)
}

// likeEscape makes s match itself alone in a LIKE pattern with ESCAPE
// '!': '_' is common in addresses.
func likeEscape(s string) string {
	r := strings.NewReplacer("!", "!!", "%", "!%", "_", "!_")
	return r.Replace(s)
}
