package template

import (
	"bytes"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/mailroom/mailroom"
)

// parsedTemplate is one template version, parsed: what the cache keeps.
type parsedTemplate struct {
	ref                 mailroom.TemplateRef
	from                string
	subject, html, text mailroom.ParsedSource // html or text may be nil
	// required maps each name that must be given to the first field
	// whose source needs it.
	required []requiredName
	// layout is the layout version it is wrapped in, parsed; nil for none.
	layout *parsedTemplate
}

// layoutContent is the name under which a layout inserts what it wraps.
const layoutContent = "content"

// allRequired lists the names the template and its layouts need, each
// once, the template's first.
func (p *parsedTemplate) allRequired() []requiredName {
	// A copy: p is shared by every render through the cache.
	out := slices.Clone(p.required)
	seen := map[string]bool{layoutContent: true}
	for _, r := range p.required {
		seen[r.name] = true
	}
	for l := p.layout; l != nil; l = l.layout {
		for _, r := range l.required {
			if r.field != "subject" && !seen[r.name] { // a layout's subject is not used
				seen[r.name] = true
				out = append(out, requiredName{r.name, "layout " + l.ref.Name + "'s " + r.field})
			}
		}
	}
	return out
}

type requiredName struct{ name, field string }

// parseTemplate parses every source of t. A source that does not parse is
// a validation error on its field, saying the line and column.
func parseTemplate(engine mailroom.TemplateEngine, t *mailroom.Template) (*parsedTemplate, mailroom.SourceNames, error) {
	p := &parsedTemplate{ref: *t.Ref(), from: t.From}
	var v mailroom.Validator
	var all mailroom.SourceNames
	seen := map[string]bool{}
	for _, part := range []struct {
		field, source string
		html          bool
		dst           *mailroom.ParsedSource
	}{{"subject", t.Subject, false, &p.subject}, {"html", t.HTML, true, &p.html}, {"text", t.Text, false, &p.text}} {
		if part.source == "" && part.field != "subject" {
			continue
		}
		parsed, err := engine.Parse(part.source, part.html)
		var syntax *mailroom.TemplateSyntaxError
		switch {
		case errors.As(err, &syntax):
			v.Add(part.field, "does not parse as Mustache: %s", syntax.Error())
			continue
		case err != nil:
			return nil, all, err
		}
		*part.dst = parsed
		names := parsed.Names()
		all.Used = append(all.Used, names.Used...)
		for _, name := range names.Required {
			if !seen[name] {
				seen[name] = true
				p.required = append(p.required, requiredName{name, part.field})
				all.Required = append(all.Required, name)
			}
		}
	}
	return p, all, v.Err()
}

// render renders the template with the variables of a request (raw JSON
// text, or nil for none), by maxRenderTime or by the sooner deadline
// given (a batch's; zero for none). Every required name that the
// variables lack is a problem of its own, all reported at once.
func (p *parsedTemplate) render(raw mailroom.Variables, by time.Time) *mailroom.RenderedTemplate {
	out := &mailroom.RenderedTemplate{Ref: &mailroom.TemplateRef{ID: p.ref.ID, Name: p.ref.Name, Version: p.ref.Version}, From: p.from}
	v := &out.Problems
	vars, ok := decodeVariables(v, raw)
	if ok {
		for _, r := range p.allRequired() {
			switch value, found := lookupName(vars, r.name); {
			case !found || value == nil:
				v.Add("variables."+r.name, "is used by the template's %s and must be given (null counts as not given)", r.field)
			case isObjectOrList(value):
				v.Add("variables."+r.name, "is inserted as text by the template's %s, so it must be a string, a number or a boolean, not an object or a list (open it with a section: {{#%s}}…{{/%s}})", r.field, r.name, r.name)
			}
		}
	}
	if v.Err() == nil {
		blankNulls(vars)
		deadline := time.Now().Add(maxRenderTime)
		if !by.IsZero() && by.Before(deadline) {
			deadline = by
		}
		out.Subject = renderPart(v, "subject", p.subject, vars, mailroom.MaxSubjectLength*utf8.UTFMax, deadline)
		out.HTML = renderPart(v, "html", p.html, vars, mailroom.MaxBodyPartBytes, deadline)
		out.Text = renderPart(v, "text", p.text, vars, mailroom.MaxBodyPartBytes, deadline)
		for l := p.layout; l != nil; l = l.layout {
			out.HTML = wrap(v, "html", l.html, vars, out.HTML, deadline)
			out.Text = wrap(v, "text", l.text, vars, out.Text, deadline)
		}
	}
	return out
}

// wrap renders a layout's source around content, a part already
// rendered; a part the template lacks, or the layout lacks, stays as it is.
func wrap(v *mailroom.Validator, field string, layout mailroom.ParsedSource, vars map[string]any, content string, deadline time.Time) string {
	if layout == nil || content == "" {
		return content
	}
	inner := make(map[string]any, len(vars)+1)
	for k, val := range vars {
		inner[k] = val
	}
	inner[layoutContent] = content
	return renderPart(v, field, layout, inner, mailroom.MaxBodyPartBytes, deadline)
}

// renderPart renders one source within limit octets, by deadline.
func renderPart(v *mailroom.Validator, field string, src mailroom.ParsedSource, vars map[string]any, limit int, deadline time.Time) string {
	if src == nil {
		return ""
	}
	var buf bytes.Buffer
	w := &renderLimit{w: &buf, bytes: limit, steps: maxRenderSteps, deadline: deadline}
	err := src.Render(w, vars)
	if w.err != nil {
		// The library ignores the errors of some writes and goes on,
		// writing nothing more.
		err = w.err
	}
	switch {
	case errors.Is(err, errRenderTooSlow):
		v.Add(field, "takes too long to render with these variables (%v a message at most, %v for all of a batch's); check the lists and long values its sections go over", maxRenderTime, mailroom.MaxBatchRenderTime)
		return ""
	case errors.Is(err, errRenderTooLarge):
		v.Add(field, "renders to more than %d octets (or more than %d pieces of text) with these variables; check the lists its sections repeat over", limit, maxRenderSteps)
		return ""
	case err != nil:
		v.Add(field, "cannot be rendered with these variables: %s", err.Error())
		return ""
	}
	return buf.String()
}

// decodeVariables decodes the variables object (at most MaxVariablesBytes)
// with numbers kept as their text: 12345678901234567890 renders as sent.
func decodeVariables(v *mailroom.Validator, raw mailroom.Variables) (map[string]any, bool) {
	vars := map[string]any{}
	if !raw.Present() {
		return vars, true
	}
	if len(raw) > mailroom.MaxVariablesBytes {
		v.Add("variables", "has %d octets of JSON; at most %d (256 KiB) are allowed", len(raw), mailroom.MaxVariablesBytes)
		return nil, false
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if err := dec.Decode(&vars); err != nil {
		// Cannot happen for variables decoded from a request.
		v.Add("variables", "must be a JSON object")
		return nil, false
	}
	return vars, true
}

// lookupName follows a dotted name into the variables.
func lookupName(vars map[string]any, name string) (any, bool) {
	var cur any = vars
	for part := range strings.SplitSeq(name, ".") {
		m, ok := cur.(map[string]any)
		if !ok {
			return nil, false
		}
		if cur, ok = m[part]; !ok {
			return nil, false
		}
	}
	return cur, true
}

func isObjectOrList(v any) bool {
	switch v.(type) {
	case map[string]any, []any:
		return true
	}
	return false
}

// blankNulls replaces every null with "": rendered as nothing, and false
// for a section, as Mustache means (the library would print "<nil>").
func blankNulls(x any) {
	switch x := x.(type) {
	case map[string]any:
		for k, v := range x {
			if v == nil {
				x[k] = ""
			} else {
				blankNulls(v)
			}
		}
	case []any:
		for i, v := range x {
			if v == nil {
				x[i] = ""
			} else {
				blankNulls(v)
			}
		}
	}
}
