package sqlstore

import (
	"encoding/json"

	"github.com/mailroom/mailroom"
)

// messageEnvelope is what the email log shows of a message beyond its
// columns: the addresses and tags, in the small envelope column, so that
// listing never reads the bodies and attachments. Delivery reads it beside
// content.
type messageEnvelope struct {
	From    mailroom.Address   `json:"from"`
	To      []mailroom.Address `json:"to"`
	Cc      []mailroom.Address `json:"cc,omitempty"`
	Bcc     []mailroom.Address `json:"bcc,omitempty"`
	ReplyTo []mailroom.Address `json:"replyTo,omitempty"`
	Tags    map[string]string  `json:"tags,omitempty"`
	// Template is the template version the message was rendered from.
	Template *mailroom.TemplateRef `json:"template,omitempty"`
}

// messageContent is the rest of the request that no query filters on,
// kept as JSON in the content column. Content held the envelope's keys as
// well until migration 00015 (00006 copied them from there into the
// envelope column by these names): decoding ignores them where they are
// left, and the envelope column is what counts.
type messageContent struct {
	HTML            string                `json:"html,omitempty"`
	Text            string                `json:"text,omitempty"`
	Headers         []mailroom.Header     `json:"headers,omitempty"`
	Attachments     []mailroom.Attachment `json:"attachments,omitempty"`
	MessageIDHeader string                `json:"messageIdHeader"`
}

func envelopeOf(m *mailroom.Message) messageEnvelope {
	return messageEnvelope{From: m.From, To: m.To, Cc: m.Cc, Bcc: m.Bcc, ReplyTo: m.ReplyTo, Tags: m.Tags, Template: m.Template}
}

func (e messageEnvelope) fill(m *mailroom.Message) {
	m.From, m.To, m.Cc, m.Bcc, m.ReplyTo, m.Tags = e.From, e.To, e.Cc, e.Bcc, e.ReplyTo, e.Tags
	m.Template = e.Template
}

func encodeContent(m *mailroom.Message) (string, error) {
	b, err := json.Marshal(messageContent{
		HTML: m.HTML, Text: m.Text, Headers: m.Headers, Attachments: m.Attachments, MessageIDHeader: m.MessageIDHeader,
	})
	return string(b), err
}

func decodeContent(raw string, m *mailroom.Message) error {
	var c messageContent
	if err := json.Unmarshal([]byte(raw), &c); err != nil {
		return err
	}
	m.HTML, m.Text, m.Headers, m.Attachments = c.HTML, c.Text, c.Headers, c.Attachments
	m.MessageIDHeader = c.MessageIDHeader
	return nil
}

func encodeEnvelope(m *mailroom.Message) (string, error) {
	b, err := json.Marshal(envelopeOf(m))
	return string(b), err
}

func decodeEnvelope(raw string, m *mailroom.Message) error {
	var e messageEnvelope
	if err := json.Unmarshal([]byte(raw), &e); err != nil {
		return err
	}
	e.fill(m)
	return nil
}

// messageBodies is messageContent without its attachments, which decoding
// skips rather than turns into bytes: what a reading of the content that
// does not show them needs.
type messageBodies struct {
	HTML            string            `json:"html,omitempty"`
	Text            string            `json:"text,omitempty"`
	Headers         []mailroom.Header `json:"headers,omitempty"`
	MessageIDHeader string            `json:"messageIdHeader"`
}

func decodeBodies(raw string, m *mailroom.Message) error {
	var c messageBodies
	if err := json.Unmarshal([]byte(raw), &c); err != nil {
		return err
	}
	m.HTML, m.Text, m.Headers, m.MessageIDHeader = c.HTML, c.Text, c.Headers, c.MessageIDHeader
	return nil
}
