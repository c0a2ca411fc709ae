package resend

import (
	"sort"
	"time"

	"github.com/mailroom/mailroom"
)

// RetrievedEmail is GET /emails/{id}'s answer
// (https://resend.com/docs/api-reference/emails/retrieve-email): what
// resend-go's Email and the Node SDK's GetEmailResponseSuccess read. cc,
// bcc, reply_to, html and text are null when the message has none, as
// Resend answers them.
type RetrievedEmail struct {
	Object      string     `json:"object"`
	ID          string     `json:"id"`
	MessageID   string     `json:"message_id"`
	To          []string   `json:"to"`
	From        string     `json:"from"`
	Cc          []string   `json:"cc"`
	Bcc         []string   `json:"bcc"`
	ReplyTo     []string   `json:"reply_to"`
	Subject     string     `json:"subject"`
	HTML        *string    `json:"html"`
	Text        *string    `json:"text"`
	CreatedAt   string     `json:"created_at"`
	ScheduledAt *string    `json:"scheduled_at"`
	LastEvent   string     `json:"last_event"`
	Tags        []EmailTag `json:"tags"`
}

// EmailTag is one of an email's tags as Resend shows them.
type EmailTag struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

// ListedEmail is an email in GET /emails: RetrievedEmail without its
// bodies, tags and Message-ID, as Resend lists them (the Node SDK's
// ListEmail). The log lists messages without reading their content.
type ListedEmail struct {
	ID          string   `json:"id"`
	To          []string `json:"to"`
	From        string   `json:"from"`
	Cc          []string `json:"cc"`
	Bcc         []string `json:"bcc"`
	ReplyTo     []string `json:"reply_to"`
	Subject     string   `json:"subject"`
	CreatedAt   string   `json:"created_at"`
	ScheduledAt *string  `json:"scheduled_at"`
	LastEvent   string   `json:"last_event"`
}

// EmailList is GET /emails' answer.
type EmailList struct {
	Object  string        `json:"object"`
	HasMore bool          `json:"has_more"`
	Data    []ListedEmail `json:"data"`
}

// EmailRef answers PATCH /emails/{id} and POST /emails/{id}/cancel.
type EmailRef struct {
	Object string `json:"object"`
	ID     string `json:"id"`
}

// NewEmailRef is the answer about the message id.
func NewEmailRef(id string) EmailRef { return EmailRef{Object: "email", ID: id} }

// ToRetrievedEmail shows a message read with its content
// (MessageStore.MessageContent) as Resend does.
func ToRetrievedEmail(m *mailroom.Message) RetrievedEmail {
	e := RetrievedEmail{
		Object: "email", ID: m.ID, To: addresses(m.To), From: m.From.String(),
		Cc: optAddresses(m.Cc), Bcc: optAddresses(m.Bcc), ReplyTo: optAddresses(m.ReplyTo),
		Subject: m.Subject, HTML: optText(m.HTML), Text: optText(m.Text),
		CreatedAt: emailTime(m.CreatedAt), ScheduledAt: optEmailTime(m.ScheduledAt), LastEvent: LastEvent(m),
		Tags: []EmailTag{},
	}
	if m.MessageIDHeader != "" {
		// As the header carries it (RFC 5322 §3.6.4), so that it compares
		// with In-Reply-To and References as they arrive.
		e.MessageID = "<" + m.MessageIDHeader + ">"
	}
	for name, value := range m.Tags {
		e.Tags = append(e.Tags, EmailTag{Name: name, Value: value})
	}
	sort.Slice(e.Tags, func(i, j int) bool { return e.Tags[i].Name < e.Tags[j].Name })
	return e
}

// ToEmailList shows a page of the log, newest first, as Resend lists it.
func ToEmailList(ms []*mailroom.Message, hasMore bool) EmailList {
	out := EmailList{Object: "list", HasMore: hasMore, Data: make([]ListedEmail, len(ms))}
	for i, m := range ms {
		out.Data[i] = ListedEmail{
			ID: m.ID, To: addresses(m.To), From: m.From.String(),
			Cc: optAddresses(m.Cc), Bcc: optAddresses(m.Bcc), ReplyTo: optAddresses(m.ReplyTo),
			Subject: m.Subject, CreatedAt: emailTime(m.CreatedAt), ScheduledAt: optEmailTime(m.ScheduledAt), LastEvent: LastEvent(m),
		}
	}
	return out
}

// EmailListQuery is GET /emails' window in the log's terms: after is the
// page of messages older than that one, newest first; before is the page
// just newer than that one, which the log gives oldest first (the caller
// lists it the other way round). The cursors are the ids the list shows.
func EmailListQuery(w ListWindow) (mailroom.MessageFilter, mailroom.Page, error) {
	var v mailroom.Validator
	for _, c := range []struct{ field, id string }{{"after", w.After}, {"before", w.Before}} {
		if c.id != "" && !mailroom.IsID(c.id, mailroom.PrefixMessage) {
			v.Add(c.field, "must be the id of an email this API listed (msg_…)")
		}
	}
	if err := v.Err(); err != nil {
		return mailroom.MessageFilter{}, mailroom.Page{}, err
	}
	f := mailroom.MessageFilter{OlderThan: w.After}
	if w.Before != "" {
		f = mailroom.MessageFilter{NewerThan: w.Before, OldestFirst: true}
	}
	return f, mailroom.Page{Limit: w.Limit}, nil
}

func addresses(as []mailroom.Address) []string {
	out := make([]string, len(as))
	for i, a := range as {
		out[i] = a.String()
	}
	return out
}

func optAddresses(as []mailroom.Address) []string {
	if len(as) == 0 {
		return nil
	}
	return addresses(as)
}

func optText(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

// emailTime writes a time as Resend's email answers do
// ("2023-04-03T22:13:42.674981+00:00": microseconds, UTC as an offset),
// which the SDKs keep as a string and JavaScript's Date and Go's
// time.RFC3339 parse.
func emailTime(t time.Time) string {
	return t.UTC().Format("2006-01-02T15:04:05.000000") + "+00:00"
}

func optEmailTime(t *time.Time) *string {
	if t == nil {
		return nil
	}
	s := emailTime(*t)
	return &s
}
