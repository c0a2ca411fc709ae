package mailroom

import (
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"
)

// WebhookRequest is the body of POST /v1/webhooks and of PATCH
// /v1/webhooks/{id}: on a PATCH, a field left out keeps its value.
type WebhookRequest struct {
	URL         *string   `json:"url,omitempty"`
	Events      *[]string `json:"events,omitempty"`
	Description *string   `json:"description,omitempty"`
	// Enabled is for PATCH only.
	Enabled *bool `json:"enabled,omitempty"`
}

// maxWebhookEvents bounds the events list: every type once, and "*".
var maxWebhookEvents = len(EventTypes) + 1

// Validate checks what needs no network and returns the change it asks
// for. create says the fields of a create are required.
func (r *WebhookRequest) Validate(create bool) (WebhookChange, error) {
	var v Validator
	c := r.change(&v, create)
	return c, v.Err()
}

func (r *WebhookRequest) change(v *Validator, create bool) WebhookChange {
	var c WebhookChange
	switch {
	case r.URL != nil:
		if u := *r.URL; len(u) > MaxWebhookURLBytes {
			v.Add("url", "has %d bytes; at most %d are allowed", len(u), MaxWebhookURLBytes)
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
		case n > maxDescription:
			v.Add("description", "has %d characters; at most %d are allowed", n, maxDescription)
		case strings.ContainsFunc(d, unicode.IsControl):
			v.Add("description", "control characters (line breaks, NUL and others) are not allowed")
		case strings.ContainsFunc(d, isInvisibleFormat):
			v.Add("description", "invisible formatting characters (such as bidi overrides, U+202A–U+202E, U+2066–U+2069) are not allowed")
		default:
			c.Description = &d
		}
	}
	if r.Enabled != nil && create {
		v.Add("enabled", "is not taken on create: an endpoint starts enabled; PATCH it to turn it off")
	}
	c.Enabled = r.Enabled
	return c
}

// checkWebhookEvents validates a subscription list and returns it without
// repeats; "*" with other types is "*" alone.
func checkWebhookEvents(v *Validator, events []string) ([]string, bool) {
	if len(events) == 0 {
		v.Add("events", `must name at least one event type, or "*" for all`)
		return nil, false
	}
	if len(events) > maxWebhookEvents*2 {
		v.Add("events", "has %d entries; there are only %d event types", len(events), len(EventTypes))
		return nil, false
	}
	ok := true
	var out []string
	for i, t := range events {
		switch {
		case t == AllEventTypes:
			return []string{AllEventTypes}, checkAllKnown(v, events)
		case !IsEventType(t):
			v.AddAt("events", i, "%q is not an event type; the types are %s, or \"*\" for all", t, OwnText(strings.Join(EventTypes, ", ")))
			ok = false
		case !slices.Contains(out, t):
			out = append(out, t)
		}
	}
	return out, ok
}

// checkAllKnown reports the unknown types of a list that holds "*" too:
// a typo beside "*" is still a typo.
func checkAllKnown(v *Validator, events []string) bool {
	ok := true
	for i, t := range events {
		if t != AllEventTypes && !IsEventType(t) {
			v.AddAt("events", i, "%q is not an event type; the types are %s, or \"*\" for all", t, OwnText(strings.Join(EventTypes, ", ")))
			ok = false
		}
	}
	return ok
}
