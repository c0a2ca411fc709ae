package mustache

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
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
	if err := checkTags(source, t.Tags(), 1); err != nil {
		return nil, err
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
// would print it as "<nil>"; the service gives "" instead). An object or a
// list that a tag inserts as text is written as its JSON, not in Go's
// notation (map[a:1]).
func (p *parsed) Render(w io.Writer, variables map[string]any) error {
	return p.t.FRender(w, asJSONText(variables))
}

// object and list print as JSON, and still read as a map and a slice to
// the library's lookups and sections. They print through fmt.Formatter,
// not String: the library resolves a name to a method of that name that
// takes no arguments before a map key, so {{String}} would call String
// instead of reading the variable "String". Format takes two.
type (
	object map[string]any
	list   []any
)

func (o object) Format(f fmt.State, _ rune) { writeJSON(f, map[string]any(o)) }
func (l list) Format(f fmt.State, _ rune)   { writeJSON(f, []any(l)) }

// writeJSON writes v as JSON as it was sent: <, > and & as themselves.
func writeJSON(w io.Writer, v any) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if enc.Encode(v) == nil {
		_, _ = w.Write(bytes.TrimSuffix(buf.Bytes(), []byte("\n")))
	}
}

// asJSONText gives every object and list below v the types that print as
// JSON.
func asJSONText(v any) any {
	switch v := v.(type) {
	case map[string]any:
		o := make(object, len(v))
		for k, x := range v {
			o[k] = asJSONText(x)
		}
		return o
	case []any:
		l := make(list, len(v))
		for i, x := range v {
			l[i] = asJSONText(x)
		}
		return l
	}
	return v
}

// names collects the names of tags: every one in Used, and those
// interpolated outside every section in Required. An inverted section
// does not count as one: it shows only where its value is false, and
// pushes no value of its own, so a name inside it is read where the
// section stands.
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
				walk(tag.Tags(), inSection || tag.Type() == cbmustache.Section)
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

// maxSectionDepth bounds how deeply sections nest. Rendering costs the
// library, per piece of text, a walk of every enclosing section's value:
// ten thousand nested sections (as the library allows) took half a minute
// and 700 MB for one render. Real templates nest a few levels.
const maxSectionDepth = 16

// checkTags refuses sections nested deeper than maxSectionDepth and names
// that no variable could have (an empty part, as in "a..b", or a space,
// as in a set-delimiters tag written wrong): such a template would be
// stored and never render as meant.
func checkTags(source string, tags []cbmustache.Tag, depth int) error {
	for _, tag := range tags {
		name := tag.Name()
		if name != "." && !validName(name) {
			line, col := locate(source, 0, `[#^&{]?\s*`+regexpQuote(name))
			return &mailroom.TemplateSyntaxError{Line: line, Column: col,
				Problem: fmt.Sprintf("%q is not a name: names are words joined by dots, such as customer.name, at most %d characters", mailroom.Excerpt(name, 40), maxNameLength)}
		}
		if tag.Type() != cbmustache.Section && tag.Type() != cbmustache.InvertedSection {
			continue
		}
		if depth > maxSectionDepth {
			line, col := locate(source, 0, `[#^]\s*`+regexpQuote(name)+`\s*\}\}`)
			return &mailroom.TemplateSyntaxError{Line: line, Column: col,
				Problem: fmt.Sprintf("sections are nested more than %d deep", maxSectionDepth)}
		}
		if err := checkTags(source, tag.Tags(), depth+1); err != nil {
			return err
		}
	}
	return nil
}

// maxNameLength bounds a name: the library follows a dotted name part by
// part at every pass of a section, so a name of half a million parts
// repeated over a list cost seconds and hundreds of megabytes.
const maxNameLength = 128

// validName accepts dotted names of at most maxNameLength characters whose
// parts are not empty and hold no space, brace or tag sigil.
func validName(name string) bool {
	if len(name) > maxNameLength {
		return false
	}
	for part := range strings.SplitSeq(name, ".") {
		if part == "" || strings.ContainsAny(part, " \t\r\n{}=!#^/>&") {
			return false
		}
	}
	return true
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
