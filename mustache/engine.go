package mustache

import (
	"errors"
	"io"
	"slices"
	"strings"

	cbmustache "github.com/cbroglie/mustache"

	"github.com/mailroom/mailroom"
)

// Engine is the service's TemplateEngine.
type Engine struct{}

var _ mailroom.TemplateEngine = Engine{}

// htmlEscaper escapes what may not appear as text in HTML, as the Mustache
// spec spells it, and NUL, which has no place in a message (RFC 5322
// §2.3), as U+FFFD (as the HTML parsing rules read it).
var htmlEscaper = strings.NewReplacer(
	"&", "&amp;", "<", "&lt;", ">", "&gt;", `"`, "&quot;", "'", "&#39;", "\x00", "\uFFFD")

// Parse parses source; see mailroom.TemplateEngine.
func (Engine) Parse(source string, escapeHTML bool) (mailroom.ParsedSource, error) {
	t, err := cbmustache.ParseStringPartialsRaw(source, noPartials{}, !escapeHTML)
	if err != nil {
		var pe cbmustache.ParseError
		if errors.As(err, &pe) {
			return nil, syntaxError(source, pe)
		}
		return nil, &mailroom.TemplateSyntaxError{Line: 1, Column: 1, Problem: err.Error()}
	}
	if name, ok := findPartial(t.Tags()); ok {
		line, col := locate(source, 0, `>\s*`+regexpQuote(name))
		return nil, &mailroom.TemplateSyntaxError{Line: line, Column: col,
			Problem: "partials ({{> " + name + "}}) are not supported: there is no partial store; put the text in the template"}
	}
	t.Escape(htmlEscaper.Replace)
	p := &parsed{t: t}
	p.names = names(t.Tags())
	return p, nil
}

// parsed is one parsed source.
type parsed struct {
	t     *cbmustache.Template
	names mailroom.SourceNames
}

func (p *parsed) Names() mailroom.SourceNames { return p.names }

// Render renders the source. The variables must not hold nil (the library
// would print it as "<nil>"): mailroom.DecodeVariables gives "" instead.
func (p *parsed) Render(w io.Writer, variables map[string]any) error {
	return p.t.FRender(w, variables)
}

// names collects the names of tags: every one in Used, and those
// interpolated outside every section in Required.
func names(tags []cbmustache.Tag) mailroom.SourceNames {
	var n mailroom.SourceNames
	var walk func(tags []cbmustache.Tag, inSection bool)
	walk = func(tags []cbmustache.Tag, inSection bool) {
		for _, tag := range tags {
			name := tag.Name()
			switch tag.Type() {
			case cbmustache.Variable:
				if name == "." {
					continue // the current item of a section
				}
				n.Used = append(n.Used, name)
				if !inSection {
					n.Required = append(n.Required, name)
				}
			case cbmustache.Section, cbmustache.InvertedSection:
				if name != "." {
					n.Used = append(n.Used, name)
				}
				walk(tag.Tags(), true)
			}
		}
	}
	walk(tags, false)
	slices.Sort(n.Used)
	slices.Sort(n.Required)
	n.Used = slices.Compact(n.Used)
	n.Required = slices.Compact(n.Required)
	return n
}

// findPartial returns the name of the first partial tag, at any depth.
func findPartial(tags []cbmustache.Tag) (string, bool) {
	for _, tag := range tags {
		switch tag.Type() {
		case cbmustache.Partial:
			return tag.Name(), true
		case cbmustache.Section, cbmustache.InvertedSection:
			if name, ok := findPartial(tag.Tags()); ok {
				return name, ok
			}
		}
	}
	return "", false
}

// noPartials is the partial store: none. Sources with partials are refused
// after parsing; this makes sure that nothing is ever read for one.
type noPartials struct{}

func (noPartials) Get(name string) (string, error) {
	return "", errors.New("partials are not supported")
}
