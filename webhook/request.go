package webhook

import (
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/mailroom/mailroom"
)

// Request is the body of POST /v1/webhooks and of PATCH
// /v1/webhooks/{id}: on a PATCH, a field left out keeps its value.
type Request struct {
	URL         *string   `json:"url,omitempty"`
	Events      *[]string `json:"events,omitempty"`
	Description *string   `json:"description,omitempty"`
	// Enabled is for PATCH only.
	Enabled *bool `json:"enabled,omitempty"`
	// Format is the payload the endpoint receives, mailroom.WebhookFormat
	// as text: "mailroom" (the default) or "resend". Resend's POST
	// /webhooks sets it to resend; /v1 takes it as given.
	// TestClientTypesMatchTheServers holds this type to
	// api.WebhookUpdateRequest.
	Format *string `json:"format,omitempty"`
}

// maxEvents bounds the events list: every type once, and "*".
var maxEvents = len(mailroom.EventTypes) + 1

// Validate checks what needs no network and returns the change it asks
// for. create says the fields of a create are required.
func (r *Request) Validate(create bool) (mailroom.WebhookChange, error) {
	var v mailroom.Validator
	c := r.change(&v, create)
	return c, v.Err()
}

func (r *Request) change(v *mailroom.Validator, create bool) mailroom.WebhookChange {
	var c mailroom.WebhookChange
	switch {
	case r.URL != nil:
		if u := *r.URL; len(u) > mailroom.MaxWebhookURLBytes {
			v.Add("url", "has %d bytes; at most %d are allowed", len(u), mailroom.MaxWebhookURLBytes)
		} else if !utf8.ValidString(u) || strings.ContainsFunc(u, func(c rune) bool { return unicode.IsControl(c) || unicode.IsSpace(c) }) {
			v.Add("url", "must not contain spaces or control characters")
		} else {
			c.URL = &u
		}
	case create:
		v.Add("url", `is required: the https URL to deliver events to, such as "https://example.com/webhooks/mailroom"`)
	}
	switch {
	case r.Events != nil:
		if events, ok := checkWebhookEvents(v, *r.Events); ok {
			c.Events = events
		}
	case create:
		v.Add("events", `is required: the event types to deliver, such as ["email.delivered", "email.bounced"], or ["*"] for all`)
	}
	if r.Description != nil {
		d := *r.Description
		switch n := utf8.RuneCountInString(d); {
		case n > mailroom.MaxDescription:
			v.Add("description", "has %d characters; at most %d are allowed", n, mailroom.MaxDescription)
		case strings.ContainsFunc(d, unicode.IsControl):
			v.Add("description", "control characters (line breaks, NUL and others) are not allowed")
		case strings.ContainsFunc(d, mailroom.IsInvisibleFormat):
			v.Add("description", "invisible formatting characters (such as bidi overrides, U+202A–U+202E, U+2066–U+2069) are not allowed")
		default:
			c.Description = &d
		}
	}
	if r.Enabled != nil && create {
		v.Add("enabled", "is not taken on create: an endpoint starts enabled; PATCH it to turn it off")
	}
	c.Enabled = r.Enabled
	if r.Format != nil {
		if f := mailroom.WebhookFormat(*r.Format); slices.Contains(mailroom.WebhookFormats, f) {
			c.Format = &f
		} else {
			v.Add("format", `must be "mailroom" (Mailroom's own payload, the default) or "resend" (Resend's payload and event names)`)
		}
	}
	return c
}

// checkWebhookEvents validates a subscription list and returns it without
// repeats; "*" with other types is "*" alone.
func checkWebhookEvents(v *mailroom.Validator, events []string) ([]string, bool) {
	if len(events) == 0 {
		v.Add("events", `must name at least one event type, or "*" for all`)
		return nil, false
	}
	if len(events) > maxEvents*2 {
		v.Add("events", "has %d entries; there are only %d event types", len(events), len(mailroom.EventTypes))
		return nil, false
	}
	ok := true
	var out []string
	for i, t := range events {
		switch {
		case t == mailroom.AllEventTypes:
			return []string{mailroom.AllEventTypes}, checkAllKnown(v, events)
		case !mailroom.IsEventType(t):
			v.AddAt("events", i, "%q is not an event type; the types are %s, or \"*\" for all", t, mailroom.OwnText(strings.Join(mailroom.EventTypes, ", ")))
			ok = false
		case !slices.Contains(out, t):
			out = append(out, t)
		}
	}
	return out, ok
}

// checkAllKnown reports the unknown types of a list that holds "*" too:
// a typo beside "*" is still a typo.
func checkAllKnown(v *mailroom.Validator, events []string) bool {
	ok := true
	for i, t := range events {
		if t != mailroom.AllEventTypes && !mailroom.IsEventType(t) {
			v.AddAt("events", i, "%q is not an event type; the types are %s, or \"*\" for all", t, mailroom.OwnText(strings.Join(mailroom.EventTypes, ", ")))
			ok = false
		}
	}
	return ok
}
