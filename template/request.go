package template

import (
	"errors"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/mailroom/mailroom"
)

// Request is the body of POST /v1/templates and of PUT
// /v1/templates/{idOrName}, as decoded from JSON.
type Request struct {
	Name        *string `json:"name,omitempty"`
	Description string  `json:"description,omitempty"`
	Subject     string  `json:"subject,omitempty"`
	HTML        string  `json:"html,omitempty"`
	Text        string  `json:"text,omitempty"`
	From        string  `json:"from,omitempty"`
	// Layout names the template to wrap this one in (id or name).
	Layout *string `json:"layout,omitempty"`
}

// Validate checks the request's fields that need no parsing and returns
// the template it describes, without id, account, version or times. On a
// PUT, current names the template it replaces: the name may be left out, and
// may not change.
func (r *Request) Validate(v *mailroom.Validator, current *mailroom.TemplateRef) *mailroom.Template {
	t := &mailroom.Template{Description: r.Description, Subject: r.Subject, HTML: r.HTML, Text: r.Text, From: r.From}
	switch {
	case r.Name == nil && current != nil:
		t.Name = current.Name
	case r.Name == nil:
		v.Add("name", "is required: a slug such as %q, unique in the account", "password-reset")
	case current != nil && *r.Name != current.Name:
		v.Add("name", "cannot change: this template is %q; create a new template under the new name", current.Name)
	default:
		if msg := mailroom.CheckTemplateName(*r.Name); msg != "" {
			v.Add("name", "%s", msg)
		}
		t.Name = *r.Name
	}
	// Shown in listings and the dashboard as one line of text, as a key's
	// name is (ValidateKeyName says why controls and invisible format
	// characters are refused); PostgreSQL could not even store a NUL.
	switch n := utf8.RuneCountInString(r.Description); {
	case n > mailroom.MaxDescription:
		v.Add("description", "has %d characters; at most %d are allowed", n, mailroom.MaxDescription)
	case strings.ContainsFunc(r.Description, unicode.IsControl):
		v.Add("description", "control characters (line breaks, NUL and others) are not allowed")
	case strings.ContainsFunc(r.Description, mailroom.IsInvisibleFormat):
		v.Add("description", "invisible formatting characters (such as bidi overrides, U+202A–U+202E, U+2066–U+2069) are not allowed")
	}
	switch {
	case r.Subject == "":
		v.Add("subject", "is required (a Mustache source, such as %q)", "Welcome, {{name}}")
	default:
		if msg := mailroom.CheckSubject(r.Subject); msg != "" {
			v.Add("subject", "%s", msg)
		}
	}
	if r.HTML == "" && r.Text == "" {
		v.Add("html", "html or text is required (or both); with html alone a text part is generated from each rendering")
	}
	for _, part := range []struct{ field, source string }{{"html", r.HTML}, {"text", r.Text}} {
		if len(part.source) > mailroom.MaxTemplatePartBytes {
			v.Add(part.field, "has %d octets; at most %d (1 MiB) are allowed in a template", len(part.source), mailroom.MaxTemplatePartBytes)
		} else if strings.IndexByte(part.source, 0) >= 0 {
			v.Add(part.field, "must not contain NUL characters")
		}
	}
	if r.From != "" {
		var problem *mailroom.Error
		if a, err := mailroom.ParseAddress(r.From); errors.As(err, &problem) {
			v.Add("from", "%s", mailroom.OwnText(problem.Message))
		} else {
			t.From = a.String()
		}
	}
	return t
}
