package template

import (
	"context"
	"fmt"
	"regexp"
	"slices"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/mailroom/mailroom"
)

// Service is the saved-templates service (docs/api.md "Templates"): it
// validates and parses templates before the store keeps them, and renders
// them for sends and previews.
type Service struct {
	Store  mailroom.TemplateStore
	Engine mailroom.TemplateEngine
	Now    func() time.Time
	// Max is how many templates an account may have; 0 means
	// DefaultMaxTemplates.
	Max int
	// MaxVersions is how many versions a template may have; 0 means
	// DefaultMaxTemplateVersions.
	MaxVersions int

	cache parsedCache
}

// Create validates, parses and stores a new template as version 1.
func (s *Service) Create(ctx context.Context, accountID string, req *Request) (*mailroom.Template, error) {
	t, err := s.prepare(ctx, accountID, req, nil)
	if err != nil {
		return nil, err
	}
	now := s.Now().UTC()
	t.ID = mailroom.NewID(mailroom.PrefixTemplate, now)
	t.AccountID = accountID
	t.Version = 1
	t.CreatedAt, t.UpdatedAt = now, now
	max := s.Max
	if max <= 0 {
		max = mailroom.DefaultMaxTemplates
	}
	if err := s.Store.CreateTemplate(ctx, t, max); err != nil {
		return nil, err
	}
	return t, nil
}

// Update replaces the content of an account's template: a new version,
// unless the template already has its most versions. The store counts
// again when it saves (concurrent updates); the check here spares parsing
// a content that would be refused.
func (s *Service) Update(ctx context.Context, accountID, idOrName string, req *Request) (*mailroom.Template, error) {
	current, err := s.Store.CurrentTemplateVersion(ctx, accountID, idOrName)
	if err != nil {
		return nil, err
	}
	max := s.MaxVersions
	if max <= 0 {
		max = mailroom.DefaultMaxTemplateVersions
	}
	if current.Version >= max {
		return nil, mailroom.TemplateVersionLimit.Err(current.Version, max)
	}
	t, err := s.prepare(ctx, accountID, req, current)
	if err != nil {
		return nil, err
	}
	t.ID, t.AccountID = current.ID, accountID
	t.UpdatedAt = s.Now().UTC()
	if err := s.Store.UpdateTemplate(ctx, t, max); err != nil {
		return nil, err
	}
	return t, nil
}

// prepare validates a request, resolves its layout and parses its
// sources, so that a template that is stored always renders; it returns
// the template with its Variables: its own names and its layouts', which
// a send must give as well.
func (s *Service) prepare(ctx context.Context, accountID string, req *Request, current *mailroom.TemplateRef) (*mailroom.Template, error) {
	var v mailroom.Validator
	t := req.Validate(&v, current)
	var layoutNames []string
	if req.Layout != nil {
		var err error
		if t.Layout, layoutNames, err = s.resolveLayout(ctx, &v, accountID, *req.Layout, current); err != nil {
			return nil, err
		}
	}
	if err := v.Err(); err != nil {
		return nil, err
	}
	p, names, err := parseTemplate(s.Engine, t)
	if err != nil {
		return nil, err
	}
	// A subject of no names that renders empty (a comment alone) would
	// fail every send.
	if len(p.subject.Names().Used) == 0 && renderPart(&v, "subject", p.subject, map[string]any{}, mailroom.MaxSubjectLength*utf8.UTFMax, time.Now().Add(maxRenderTime)) == "" {
		v.Add("subject", "renders empty whatever the variables; a message needs a subject")
		return nil, v.Err()
	}
	t.Variables = sortedUnique(append(names.Used, layoutNames...))
	if len(t.Variables) > maxTemplateNames {
		v.Add("html", "the template uses %d names; at most %d are allowed", len(t.Variables), maxTemplateNames)
		return nil, v.Err()
	}
	return t, nil
}

// layoutProblem says what keeps a template (parsed as p) from serving as a
// layout, or "": its html must insert the content unescaped
// ({{{content}}} or {{& content}}: {{content}} would show the wrapped
// HTML as text), and its text, if it has one, must insert {{content}}.
func layoutProblem(layout *mailroom.Template, p *parsedTemplate) string {
	if layout.HTML != "" && !rawContent.MatchString(layout.HTML) {
		return fmt.Sprintf("the template %q inserts no {{{%s}}} in its html: a layout puts the template's html where it says {{{%s}}} (or {{& %s}}), unescaped", layout.Name, layoutContent, layoutContent, layoutContent)
	}
	if p.text != nil && !slices.Contains(p.text.Names().Used, layoutContent) {
		return fmt.Sprintf("the template %q inserts no {{%s}} in its text: a layout puts the template's text where it says {{%s}}", layout.Name, layoutContent, layoutContent)
	}
	return ""
}

// rawContent finds an unescaped insertion of the content in a layout's
// html (with the default delimiters).
var rawContent = regexp.MustCompile(`\{\{\{\s*` + layoutContent + `\s*\}\}\}|\{\{&\s*` + layoutContent + `\s*\}\}`)

// maxTemplateNames bounds the names a template (with its layouts) uses:
// every one is listed in its variables, and lists show a hundred templates.
const maxTemplateNames = 1000

// maxLayoutDepth bounds a chain of layouts (a layout may have its own).
const maxLayoutDepth = 4

// resolveLayout finds the layout a request names, in its current version,
// and the names its chain uses in html and text besides content (a
// layout's subject is not used, so its names are not the wrapped
// template's to give). It refuses a layout that does not insert the
// content, and a chain that comes back to the template being saved (a
// cycle) or is more than maxLayoutDepth long. The chain is read as sends
// read it (load: parsed, and cached). Problems go to v; the error is for
// storage.
func (s *Service) resolveLayout(ctx context.Context, v *mailroom.Validator, accountID, ref string, current *mailroom.TemplateRef) (*mailroom.TemplateRef, []string, error) {
	if ref == "" {
		v.Add("layout", "must not be empty: give a template's id or name, or leave layout out for none")
		return nil, nil, nil
	}
	layout, err := s.Store.Template(ctx, accountID, ref)
	if mailroom.IsCode(err, mailroom.ECodeNotFound) {
		v.Add("layout", "names no template of this account: %q", ref)
		return nil, nil, nil
	}
	if err != nil {
		return nil, nil, err
	}
	chain, err := s.load(ctx, accountID, *layout.Ref(), 0)
	if e, ok := err.(*mailroom.Error); ok && e.Code == mailroom.ECodeInvalidState {
		v.Add("layout", "%q cannot serve as a layout: %s", ref, e.Message)
		return nil, nil, nil
	}
	if err != nil {
		return nil, nil, err
	}
	if msg := layoutProblem(layout, chain); msg != "" {
		v.Add("layout", "%s", msg)
		return nil, nil, nil
	}
	var names []string
	depth := 0
	for l := chain; l != nil; l = l.layout {
		if depth++; current != nil && l.ref.ID == current.ID {
			v.Add("layout", "%q would wrap this template in itself (a cycle of layouts)", ref)
			return nil, nil, nil
		}
		for _, part := range []mailroom.ParsedSource{l.html, l.text} {
			if part != nil {
				for _, n := range part.Names().Used {
					if n != layoutContent {
						names = append(names, n)
					}
				}
			}
		}
	}
	if depth > maxLayoutDepth {
		v.Add("layout", "%q is wrapped in layouts itself: with it, this template would have %d; at most %d are allowed", ref, depth, maxLayoutDepth)
		return nil, nil, nil
	}
	return layout.Ref(), names, nil
}

// Render renders an account's template with variables as a send would,
// and applies the send's rules to the result: what it answers is what a
// send would store, or the 400 a send would get.
func (s *Service) Render(ctx context.Context, accountID, idOrName string, variables mailroom.Variables) (*mailroom.RenderedTemplate, error) {
	out, err := s.ForSend(ctx, accountID, idOrName, variables, time.Time{})
	if err != nil {
		return nil, err
	}
	var v mailroom.Validator
	v.Merge(&out.Problems)
	if !out.Failed() {
		out.Subject, out.HTML, out.Text = checkRendered(&v, out)
	}
	if err := v.Err(); err != nil {
		return nil, err
	}
	return out, nil
}

// ForSend renders the current version of an account's template for a send
// (docs/api.md "Sending"). Its problems (a missing variable) are in the
// result, for the send to report with its own; the error is for a template
// that does not exist and for storage. The parsed template comes from a
// cache keyed by id and version, so a send reads only the template's
// current version from storage unless the cache lacks it. Rendering ends
// by renderBy when that comes before its own time limit (a batch's
// budget; zero for none).
func (s *Service) ForSend(ctx context.Context, accountID, idOrName string, variables mailroom.Variables, renderBy time.Time) (*mailroom.RenderedTemplate, error) {
	ref, err := s.Store.CurrentTemplateVersion(ctx, accountID, idOrName)
	if err != nil {
		return nil, err
	}
	p, err := s.load(ctx, accountID, *ref, 0)
	if err != nil {
		return nil, err
	}
	return p.render(variables, renderBy), nil
}

// load returns a template version parsed, with its layouts, from the
// cache or from storage.
func (s *Service) load(ctx context.Context, accountID string, ref mailroom.TemplateRef, depth int) (*parsedTemplate, error) {
	if p, ok := s.cache.get(ref); ok {
		return p, nil
	}
	t, err := s.Store.TemplateVersion(ctx, accountID, ref.ID, ref.Version)
	if mailroom.IsCode(err, mailroom.ECodeNotFound) && depth > 0 {
		return nil, mailroom.Errorf(mailroom.ECodeInvalidState, "The layout %s of this template is gone; save the template again.", ref.ID)
	}
	if err != nil {
		return nil, err
	}
	p, _, err := parseTemplate(s.Engine, t)
	if err != nil {
		// Stored templates were parsed before they were stored.
		return nil, err
	}
	if t.Layout != nil {
		if depth >= maxLayoutDepth {
			return nil, mailroom.Errorf(mailroom.ECodeInvalidState, "The layouts of this template are nested deeper than %d.", maxLayoutDepth)
		}
		if p.layout, err = s.load(ctx, accountID, *t.Layout, depth+1); err != nil {
			return nil, err
		}
	}
	s.cache.put(ref, p)
	return p, nil
}

// checkRendered applies the rules of a send to a rendering that is to be
// answered as it is (the render route): the subject's, and the bodies'
// limits. It returns the subject, html and text a send would store: the
// text generated from the html when the template has no text.
func checkRendered(v *mailroom.Validator, out *mailroom.RenderedTemplate) (subject, html, text string) {
	if out.Subject == "" {
		v.Add("subject", "renders empty with these variables; a message needs a subject")
	} else if msg := mailroom.CheckSubject(out.Subject); msg != "" {
		v.Add("subject", "as rendered, %s", msg)
	}
	if out.HTML == "" && out.Text == "" {
		v.Add("html", "the template renders no html and no text with these variables")
		return out.Subject, "", ""
	}
	ok := mailroom.CheckBodyPart(v, "html", out.HTML)
	ok = mailroom.CheckBodyPart(v, "text", out.Text) && ok
	text = out.Text
	if ok && text == "" {
		text = mailroom.HTMLToText(out.HTML)
	}
	return out.Subject, out.HTML, text
}

// parsedCache keeps parsed template versions. A version never changes, so
// entries never go stale; the cache only bounds its size, by forgetting
// everything when full (a template's next send parses it again).
type parsedCache struct {
	mu sync.Mutex
	m  map[mailroom.TemplateRef]*parsedTemplate
}

// maxParsedTemplates bounds the cache: each entry holds at most two 1 MiB
// sources' parse trees.
const maxParsedTemplates = 256

func (c *parsedCache) get(ref mailroom.TemplateRef) (*parsedTemplate, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	p, ok := c.m[mailroom.TemplateRef{ID: ref.ID, Version: ref.Version}]
	return p, ok
}

func (c *parsedCache) put(ref mailroom.TemplateRef, p *parsedTemplate) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil || len(c.m) >= maxParsedTemplates {
		c.m = map[mailroom.TemplateRef]*parsedTemplate{}
	}
	c.m[mailroom.TemplateRef{ID: ref.ID, Version: ref.Version}] = p
}

// sortedUnique returns the strings of list sorted, each once.
func sortedUnique(list []string) []string {
	out := slices.Clone(list)
	slices.Sort(out)
	return slices.Compact(out)
}
