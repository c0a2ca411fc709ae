package resend

import (
	"errors"
	"slices"
	"strings"
	"time"

	"github.com/mailroom/mailroom"
)

// Resend's webhook routes (https://resend.com/docs/api-reference/webhooks;
// resend-go v3 webhooks.go, the Node SDK's webhooks interfaces): the
// bodies they take and answer. An endpoint is Mailroom's webhook endpoint
// of format resend; the rules (the URL's SSRF checks, the limits, what
// turning one off does) are webhook.Service's, as on /v1.

// WebhookRequest is the body of POST /webhooks and of PATCH
// /webhooks/{id}. null and "" are absent, as everywhere on these routes.
type WebhookRequest struct {
	Endpoint *string  `json:"endpoint"`
	Events   []string `json:"events"`
	// Status is for PATCH: "enabled" or "disabled".
	Status *string `json:"status"`
}

// WebhookCreated answers POST /webhooks.
type WebhookCreated struct {
	Object        string `json:"object"` // "webhook"
	ID            string `json:"id"`
	SigningSecret string `json:"signing_secret"`
}

// Webhook answers GET /webhooks/{id}.
type Webhook struct {
	Object        string   `json:"object"` // "webhook"
	ID            string   `json:"id"`
	Endpoint      string   `json:"endpoint"`
	Events        []string `json:"events"`
	Status        string   `json:"status"` // "enabled" or "disabled"
	SigningSecret string   `json:"signing_secret"`
	CreatedAt     string   `json:"created_at"`
}

// WebhookInList is an endpoint of GET /webhooks: Webhook without its
// secret, as Resend lists them.
type WebhookInList struct {
	ID        string   `json:"id"`
	Endpoint  string   `json:"endpoint"`
	Events    []string `json:"events"`
	Status    string   `json:"status"`
	CreatedAt string   `json:"created_at"`
}

// WebhookList answers GET /webhooks.
type WebhookList struct {
	Object  string          `json:"object"` // "list"
	HasMore bool            `json:"has_more"`
	Data    []WebhookInList `json:"data"`
}

// WebhookRef answers PATCH /webhooks/{id}.
type WebhookRef struct {
	Object string `json:"object"` // "webhook"
	ID     string `json:"id"`
}

// WebhookDeleted answers DELETE /webhooks/{id}.
type WebhookDeleted struct {
	Object  string `json:"object"` // "webhook"
	ID      string `json:"id"`
	Deleted bool   `json:"deleted"`
}

// Webhook statuses.
const (
	WebhookEnabled  = "enabled"
	WebhookDisabled = "disabled"
)

// NewWebhook shows e with its secret as GET /webhooks/{id} does.
func NewWebhook(e *mailroom.WebhookEndpoint, secret string) Webhook {
	l := NewWebhookInList(e)
	return Webhook{Object: "webhook", ID: l.ID, Endpoint: l.Endpoint, Events: l.Events, Status: l.Status,
		SigningSecret: secret, CreatedAt: l.CreatedAt}
}

// NewWebhookInList shows e as GET /webhooks lists it: its subscription in
// Resend's event names (EventNames).
func NewWebhookInList(e *mailroom.WebhookEndpoint) WebhookInList {
	status := WebhookEnabled
	if !e.Enabled {
		status = WebhookDisabled
	}
	return WebhookInList{ID: e.ID, Endpoint: e.URL, Events: EventNames(e.Events), Status: status,
		CreatedAt: webhookTime(e.CreatedAt)}
}

// Enabled reads a PATCH's status: nil when absent (null or ""), else
// whether it turns the endpoint on.
func (r *WebhookRequest) Enabled() (*bool, error) {
	if r.Status == nil || *r.Status == "" {
		return nil, nil
	}
	switch *r.Status {
	case WebhookEnabled:
		return new(true), nil
	case WebhookDisabled:
		return new(false), nil
	}
	var v mailroom.Validator
	v.Add("status", `must be "enabled" or "disabled"`)
	return nil, v.Err()
}

// URL is the endpoint given, nil when absent (null or "").
func (r *WebhookRequest) URL() *string {
	if r.Endpoint == nil || *r.Endpoint == "" {
		return nil
	}
	return r.Endpoint
}

// WebhookFields names the fields of a webhook request's validation error
// as Resend does (url is endpoint, enabled is status), so that the message
// names what the caller sent.
func WebhookFields(err error) error {
	var e *mailroom.Error
	if !errors.As(err, &e) || len(e.Details) == 0 {
		return err
	}
	out := *e
	out.Details = slices.Clone(e.Details)
	for i, d := range out.Details {
		switch d.Field {
		case "url":
			out.Details[i].Field = "endpoint"
			out.Details[i].Message = strings.Replace(d.Message, `"url"`, `"endpoint"`, 1)
		case "enabled":
			out.Details[i].Field = "status"
		}
	}
	return &out
}

// webhookTime is the form of an endpoint's created_at.
func webhookTime(t time.Time) string { return t.UTC().Format(payloadTime) }
