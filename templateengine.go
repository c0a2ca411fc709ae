package mailroom

import (
	"errors"
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

// errRenderTooLarge and errRenderTooSlow stop a render past its limits
// (renderLimit).
var (
	errRenderTooLarge = errors.New("render limit reached")
	errRenderTooSlow  = errors.New("render time limit reached")
)

// renderLimit is the writer a source is rendered into. It bounds the output
// (a section over a list of a thousand items, nested three deep, would
// write a thousand million copies) and the work: every text piece written,
// empty or not, counts as a step, so sections that loop over large lists
// and write nothing still stop.
//
// Work between two writes is bounded by the names' length and the values'
// size, but not their product over many sections (a section over a long
// blank string tests it for blankness each time, say): the deadline,
// checked at every write, bounds the whole render in time.
type renderLimit struct {
	w        io.Writer
	bytes    int
	steps    int
	deadline time.Time
	err      error
}

// Render bounds (docs/api.md "Templates").
const (
	// maxRenderSteps bounds the pieces of text one render writes.
	maxRenderSteps = 1 << 20
	// maxRenderTime bounds one request's rendering, all parts and layouts
	// together: real templates render in well under a millisecond.
	maxRenderTime = time.Second
	// MaxBatchRenderTime bounds the rendering of all the items of a batch
	// together: 500 items at maxRenderTime each would hold a request for
	// minutes.
	MaxBatchRenderTime = 5 * time.Second
)

func (l *renderLimit) Write(p []byte) (int, error) {
	l.steps--
	l.bytes -= len(p)
	switch {
	case l.err != nil:
	case l.steps < 0 || l.bytes < 0:
		l.err = errRenderTooLarge
	case time.Now().After(l.deadline):
		l.err = errRenderTooSlow
	default:
		return l.w.Write(p)
	}
	return 0, l.err
}
