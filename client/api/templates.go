package api

import "time"

// TemplateRequest is the body of POST /v1/templates and of PUT
// /v1/templates/{idOrName} (OpenAPI schema TemplateRequest). A PUT saves a
// new version; Name may then be left out, and cannot change.
type TemplateRequest struct {
	// Name is a slug [a-z0-9][a-z0-9_-]{0,63}, not starting with tpl_,
	// unique in the account. Required on create.
	Name string `json:"name,omitempty"`
	// Description is at most 1,000 characters on one line.
	Description string `json:"description,omitempty"`
	// Subject is a Mustache source of 1..998 characters. Required.
	Subject string `json:"subject"`
	// HTML and Text are Mustache sources of at most 1 MiB each; at least
	// one.
	HTML string `json:"html,omitempty"`
	Text string `json:"text,omitempty"`
	// From is the sender a send uses when it gives none.
	From string `json:"from,omitempty"`
	// Layout is another template (id or name) to wrap this one in.
	Layout string `json:"layout,omitempty"`
}

// TemplateSummary is a template version as GET /v1/templates and GET
// /v1/templates/{idOrName}/versions list it (OpenAPI schema
// TemplateSummary): everything but its html and text.
type TemplateSummary struct {
	ID          string `json:"id"`
	Name        string `json:"name"`
	Description string `json:"description"`
	Subject     string `json:"subject"`
	// From is null when the template gives no sender.
	From *string `json:"from"`
	// Layout is the layout version this version is wrapped in; null for
	// none.
	Layout *TemplateRef `json:"layout"`
	// Version counts from 1; each PUT adds one.
	Version int `json:"version"`
	// Variables lists every name the template and its layouts use, dotted
	// names whole, sorted; never null.
	Variables []string  `json:"variables"`
	CreatedAt time.Time `json:"createdAt"`
	// UpdatedAt is when this version was saved.
	UpdatedAt time.Time `json:"updatedAt"`
}

// Template is a template version whole (OpenAPI schema Template), as POST
// /v1/templates, GET and PUT /v1/templates/{idOrName} and GET
// /v1/templates/{idOrName}/versions/{version} answer it.
type Template struct {
	TemplateSummary
	// HTML and Text are null when the template has none.
	HTML *string `json:"html"`
	Text *string `json:"text"`
}

// TemplateRenderRequest is the body of POST /v1/templates/{idOrName}/render
// (OpenAPI schema TemplateRenderRequest): the values, as a send's.
type TemplateRenderRequest struct {
	Variables map[string]any `json:"variables,omitempty"`
}

// TemplateRendered answers POST /v1/templates/{idOrName}/render (OpenAPI
// schema TemplateRendered): exactly what a send would store. Nothing is
// sent.
type TemplateRendered struct {
	Subject string `json:"subject"`
	// HTML is empty when the template has no html.
	HTML string `json:"html"`
	// Text is generated from the html when the template has no text.
	Text string `json:"text"`
}
