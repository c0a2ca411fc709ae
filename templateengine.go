package mailroom

import (
	"fmt"
	"io"
	"time"
)

// TemplateEngine parses template sources (Mustache, package mustache). The
// service parses each source once per template version and renders the
// parsed form for every send.
type TemplateEngine interface {
	// Parse parses one source. With escapeHTML, values are HTML-escaped
	// where the source interpolates them with {{name}}; {{{name}}} and
	// {{& name}} never escape. A source that does not parse, or that uses
	// what the service does not offer (partials), is a *TemplateSyntaxError.
	Parse(source string, escapeHTML bool) (ParsedSource, error)
}

// ParsedSource is one parsed source: a subject, an html or a text.
type ParsedSource interface {
	// Names are the names the source uses.
	Names() SourceNames
	// Render writes the source with variables (decoded JSON: maps,
	// slices, strings, json.Number, booleans, nil) to w, and stops at the
	// first error w returns.
	Render(w io.Writer, variables map[string]any) error
}

// SourceNames are the names a source uses, dotted names whole.
type SourceNames struct {
	// Used is every name: interpolated, or opening a section or an
	// inverted section, at any depth.
	Used []string
	// Required are the names interpolated outside every section: the
	// request must give them (docs/api.md "Templates"). A name inside a
	// section may come from the section's own value, and a section's name
	// may be absent (it is then false).
	Required []string
}

// TemplateSyntaxError says where a source fails to parse.
type TemplateSyntaxError struct {
	Line, Column int // from 1
	Problem      string
}

func (e *TemplateSyntaxError) Error() string {
	return fmt.Sprintf("line %d, column %d: %s", e.Line, e.Column, e.Problem)
}

// MaxBatchRenderTime bounds the rendering of all the items of a batch
// together (docs/api.md "Templates"): 500 items at a second each (package
// template's limit for one request) would hold a request for minutes.
const MaxBatchRenderTime = 5 * time.Second
