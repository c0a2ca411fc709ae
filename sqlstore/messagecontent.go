package sqlstore

import (
	"encoding/json"

	"github.com/mailroom/mailroom"
)

// messageContent is what a message row keeps as JSON: everything of the
// request that no query filters on.
type messageContent struct {
	From            mailroom.Address      `json:"from"`
	To              []mailroom.Address    `json:"to"`
	Cc              []mailroom.Address    `json:"cc,omitempty"`
	Bcc             []mailroom.Address    `json:"bcc,omitempty"`
	ReplyTo         []mailroom.Address    `json:"replyTo,omitempty"`
	HTML            string                `json:"html,omitempty"`
	Text            string                `json:"text,omitempty"`
	Headers         []mailroom.Header     `json:"headers,omitempty"`
	Attachments     []mailroom.Attachment `json:"attachments,omitempty"`
	Tags            map[string]string     `json:"tags,omitempty"`
	MessageIDHeader string                `json:"messageIdHeader"`
}

func encodeContent(m *mailroom.Message) (string, error) {
	b, err := json.Marshal(messageContent{
		From: m.From, To: m.To, Cc: m.Cc, Bcc: m.Bcc, ReplyTo: m.ReplyTo, HTML: m.HTML, Text: m.Text,
		Headers: m.Headers, Attachments: m.Attachments, Tags: m.Tags, MessageIDHeader: m.MessageIDHeader,
	})
	return string(b), err
}

func decodeContent(raw string, m *mailroom.Message) error {
	var c messageContent
	if err := json.Unmarshal([]byte(raw), &c); err != nil {
		return err
	}
	m.From, m.To, m.Cc, m.Bcc, m.ReplyTo = c.From, c.To, c.Cc, c.Bcc, c.ReplyTo
	m.HTML, m.Text, m.Headers, m.Attachments, m.Tags = c.HTML, c.Text, c.Headers, c.Attachments, c.Tags
	m.MessageIDHeader = c.MessageIDHeader
	return nil
}
