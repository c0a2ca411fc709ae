package mailroom

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Limits of a template (docs/api.md "Templates").
const (
	// MaxTemplatePartBytes bounds a template's html and its text, each.
	MaxTemplatePartBytes = 1 << 20
	// DefaultMaxTemplates is how many templates an account may have unless
	// the operator says otherwise (serve --max-templates).
	DefaultMaxTemplates = 1000
	// MaxVariablesBytes bounds the variables object of a send or render.
	MaxVariablesBytes = 256 << 10
	maxTemplateName   = 64
	MaxDescription    = 1000 // characters
)

// TemplateRequest is the body of POST /v1/templates and of PUT
// /v1/templates/{idOrName}, as decoded from JSON.
type TemplateRequest struct {
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
func (r *TemplateRequest) Validate(v *Validator, current *TemplateRef) *Template {
	t := &Template{Description: r.Description, Subject: r.Subject, HTML: r.HTML, Text: r.Text, From: r.From}
	switch {
	case r.Name == nil && current != nil:
		t.Name = current.Name
	case r.Name == nil:
		v.Add("name", "is required: a slug such as %q, unique in the account", "password-reset")
	case current != nil && *r.Name != current.Name:
		v.Add("name", "cannot change: this template is %q; create a new template under the new name", current.Name)
	default:
		if msg := checkTemplateName(*r.Name); msg != "" {
			v.Add("name", "%s", msg)
		}
		t.Name = *r.Name
	}
	// Shown in listings and the dashboard as one line of text, as a key's
	// name is (ValidateKeyName says why controls and invisible format
	// characters are refused); PostgreSQL could not even store a NUL.
	switch n := utf8.RuneCountInString(r.Description); {
	case n > MaxDescription:
		v.Add("description", "has %d characters; at most %d are allowed", n, MaxDescription)
	case strings.ContainsFunc(r.Description, unicode.IsControl):
		v.Add("description", "control characters (line breaks, NUL and others) are not allowed")
	case strings.ContainsFunc(r.Description, IsInvisibleFormat):
		v.Add("description", "invisible formatting characters (such as bidi overrides, U+202A–U+202E, U+2066–U+2069) are not allowed")
	}
	switch {
	case r.Subject == "":
		v.Add("subject", "is required (a Mustache source, such as %q)", "Welcome, {{name}}")
	default:
		if msg := CheckSubject(r.Subject); msg != "" {
			v.Add("subject", "%s", msg)
		}
	}
	if r.HTML == "" && r.Text == "" {
		v.Add("html", "html or text is required (or both); with html alone a text part is generated from each rendering")
	}
	for _, part := range []struct{ field, source string }{{"html", r.HTML}, {"text", r.Text}} {
		if len(part.source) > MaxTemplatePartBytes {
			v.Add(part.field, "has %d octets; at most %d (1 MiB) are allowed in a template", len(part.source), MaxTemplatePartBytes)
		} else if strings.IndexByte(part.source, 0) >= 0 {
			v.Add(part.field, "must not contain NUL characters")
		}
	}
	if r.From != "" {
		if a, problem := parseAddress(r.From); problem != "" {
			v.Add("from", "%s", OwnText(problem))
		} else {
			t.From = a.String()
		}
	}
	return t
}

// checkTemplateName applies the slug rule of docs/api.md "Templates". A
// name may not look like an id: "tpl_…" names a template by its id.
func checkTemplateName(name string) string {
	ok := name != "" && len(name) <= maxTemplateName
	for i := 0; ok && i < len(name); i++ {
		c := name[i]
		switch {
		case 'a' <= c && c <= 'z', '0' <= c && c <= '9':
		case (c == '-' || c == '_') && i > 0:
		default:
			ok = false
		}
	}
	if !ok {
		return fmt.Sprintf("must be a slug: 1 to %d characters of a-z, 0-9, '-' and '_', starting with a letter or digit", maxTemplateName)
	}
	if strings.HasPrefix(name, PrefixTemplate) {
		return fmt.Sprintf("must not start with %q, which names a template by its id", PrefixTemplate)
	}
	return ""
}

// CheckTemplateRef says what is wrong with a template's id or name as a
// client gives it (a send's template, the log's ?template= filter), or ""
// when it could name a template.
func CheckTemplateRef(ref string) string {
	if id, ok := strings.CutPrefix(ref, PrefixTemplate); ok {
		// A ULID in lower case (NewID).
		if len(id) != 26 || strings.ContainsFunc(id, func(r rune) bool { return !('0' <= r && r <= '9' || 'a' <= r && r <= 'z') }) {
			return "is not a template id (tpl_ and 26 letters and digits)"
		}
		return ""
	}
	return checkTemplateName(ref)
}
