package api

import (
	"bytes"
	"encoding/json"
	"time"
)

// Category is a message's kind (docs/api.md "Sending").
type Category string

const (
	// CategoryTransactional is the default: receipts, password resets,
	// alerts. Not stopped by an unsubscribe.
	CategoryTransactional Category = "transactional"
	// CategoryMarketing mail is sent one copy per recipient with one-click
	// List-Unsubscribe headers, and stops for an address that unsubscribed.
	CategoryMarketing Category = "marketing"
)

// SendRequest is the body of POST /v1/send, and one item of POST
// /v1/send/batch (OpenAPI schema SendRequest). Fields left at their zero
// value are left out of the JSON, so that the service's defaults (and the
// template's from and subject) apply.
type SendRequest struct {
	// From is "Name <addr>" or "addr"; its domain must be a verified domain
	// of the account. Required unless the template gives one.
	From string `json:"from,omitempty"`
	// To, Cc and Bcc hold at most 50 addresses together, each "addr" or
	// "Name <addr>". To is required.
	To      AddressList `json:"to,omitempty"`
	Cc      AddressList `json:"cc,omitempty"`
	Bcc     AddressList `json:"bcc,omitempty"`
	ReplyTo AddressList `json:"replyTo,omitempty"`
	// Subject is 1..998 characters without line breaks. Required unless
	// the template gives one.
	Subject string `json:"subject,omitempty"`
	// Category is transactional (the default when left out) or marketing.
	Category Category `json:"category,omitempty"`
	// HTML and Text are the bodies, at most 5 MiB each; at least one,
	// unless Template is given (then neither). With HTML alone a text part
	// is generated from it.
	HTML string `json:"html,omitempty"`
	Text string `json:"text,omitempty"`
	// Template is a template's id (tpl_…) or name; Variables are its
	// values. See docs/api.md "Templates".
	Template string `json:"template,omitempty"`
	// Variables is a JSON object of at most 256 KiB. Give a json.Number
	// for a number that must keep every digit.
	Variables map[string]any `json:"variables,omitempty"`
	// Headers are extra header fields, name → value (at most 100, 16 KiB
	// together); the service's own headers are refused.
	Headers map[string]string `json:"headers,omitempty"`
	// Attachments: at most 100, 10 MiB decoded in all.
	Attachments []Attachment `json:"attachments,omitempty"`
	// Tags: at most 10 pairs, keys [A-Za-z0-9_-]{1,64}, values at most 256
	// characters; filterable in the log and sent with events.
	Tags map[string]string `json:"tags,omitempty"`
	// ScheduledAt sends the message later: at most 30 days ahead. It is
	// written in RFC 3339 with its time zone; fractions of a second round
	// up.
	ScheduledAt *time.Time `json:"scheduledAt,omitempty"`
	// IdempotencyKey is 1..256 printable ASCII characters: the same key with
	// the same request answers "duplicate" and sends nothing. It is the same
	// as the Idempotency-Key header (which a batch refuses: there each item
	// carries its own).
	IdempotencyKey string `json:"idempotencyKey,omitempty"`
	// RequireTLS asks for REQUIRETLS (RFC 8689): the message is delivered
	// only over verified TLS to an MX host that an MTA-STS policy names
	// and that advertises REQUIRETLS, else bounced with 5.7.30
	// (docs/api.md "TLS policy").
	RequireTLS bool `json:"requireTls,omitempty"`
	// Tracking overrides the domain's openTracking and clickTracking for
	// this message (docs/api.md "Engagement tracking"): a field left out
	// follows the domain.
	Tracking *TrackingOverride `json:"tracking,omitempty"`
}

// AddressList is an address field of a send: the API takes one address as
// a string or several as an array. It marshals as an array and unmarshals
// from either.
type AddressList []string

// UnmarshalJSON accepts a string, an array of strings, or null.
func (l *AddressList) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	if len(b) > 0 && b[0] == '"' {
		var s string
		if err := json.Unmarshal(b, &s); err != nil {
			return err
		}
		*l = AddressList{s}
		return nil
	}
	var list []string
	if err := json.Unmarshal(b, &list); err != nil {
		return err
	}
	*l = list
	return nil
}

// Attachment is one attachment of a send.
type Attachment struct {
	// Filename is at most 255 octets, without path separators.
	Filename string `json:"filename"`
	// Content is the file's bytes; on the wire, standard base64.
	Content []byte `json:"content"`
	// ContentType is inferred from Filename when left out; multipart/*
	// types are refused.
	ContentType string `json:"contentType,omitempty"`
	// ContentID ([A-Za-z0-9._@-]{1,100}) makes the attachment inline, for
	// <img src="cid:…">.
	ContentID string `json:"contentId,omitempty"`
}

// SendStatus is how the service took a send.
type SendStatus string

const (
	// SendQueued: accepted and committed, to be sent now (also when every
	// recipient is suppressed: the log says so).
	SendQueued SendStatus = "queued"
	// SendScheduled: accepted and committed, to be sent at its scheduledAt.
	SendScheduled SendStatus = "scheduled"
	// SendDuplicate: a request already accepted under this idempotency key;
	// MessageID is the first message's, and nothing more is sent.
	SendDuplicate SendStatus = "duplicate"
)

// SendResult answers POST /v1/send, and each accepted item of a batch
// (OpenAPI schema SendResult). A 200 means the message is committed to
// durable storage.
type SendResult struct {
	Status    SendStatus `json:"status"`
	MessageID string     `json:"messageId"`
}
