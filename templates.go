package mailroom

import (
	"context"
	"sync"
	"time"
)

// Templates is the saved-templates service (docs/api.md "Templates"): it
// validates and parses templates before the store keeps them, and renders
// them for sends and previews.
type Templates struct {
	Store  TemplateStore
	Engine TemplateEngine
	Now    func() time.Time
	// Max is how many templates an account may have; 0 means
	// DefaultMaxTemplates.
	Max int

	cache parsedCache
}

// Create validates, parses and stores a new template as version 1.
func (s *Templates) Create(ctx context.Context, accountID string, req *TemplateRequest) (*Template, error) {
	t, err := s.prepare(req, nil)
	if err != nil {
		return nil, err
	}
	now := s.Now().UTC()
	t.ID = NewID(PrefixTemplate, now)
	t.AccountID = accountID
	t.Version = 1
	t.CreatedAt, t.UpdatedAt = now, now
	max := s.Max
	if max <= 0 {
		max = DefaultMaxTemplates
	}
	if err := s.Store.CreateTemplate(ctx, t, max); err != nil {
		return nil, err
	}
	return t, nil
}

// Update replaces the content of an account's template: a new version.
func (s *Templates) Update(ctx context.Context, accountID, idOrName string, req *TemplateRequest) (*Template, error) {
	current, err := s.Store.Template(ctx, accountID, idOrName)
	if err != nil {
		return nil, err
	}
	t, err := s.prepare(req, current)
	if err != nil {
		return nil, err
	}
	t.ID, t.AccountID = current.ID, accountID
	t.UpdatedAt = s.Now().UTC()
	if err := s.Store.UpdateTemplate(ctx, t); err != nil {
		return nil, err
	}
	return t, nil
}

// prepare validates a request and parses its sources, so that a template
// that is stored always renders; it returns the template with its
// Variables.
func (s *Templates) prepare(req *TemplateRequest, current *Template) (*Template, error) {
	var v Validator
	t := req.validate(&v, current)
	if err := v.Err(); err != nil {
		return nil, err
	}
	_, names, err := parseTemplate(s.Engine, t)
	if err != nil {
		return nil, err
	}
	t.Variables = sortedUnique(names.Used)
	return t, nil
}

// Render renders an account's template with variables as a send would,
// and applies the send's rules to the result: what it answers is what a
// send would store, or the 400 a send would get.
func (s *Templates) Render(ctx context.Context, accountID, idOrName string, variables Variables) (*RenderedTemplate, error) {
	out, err := s.ForSend(ctx, accountID, idOrName, variables)
	if err != nil {
		return nil, err
	}
	var v Validator
	v.addDetails(out.Problems)
	if len(out.Problems) == 0 {
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
// current version from storage unless the cache lacks it.
func (s *Templates) ForSend(ctx context.Context, accountID, idOrName string, variables Variables) (*RenderedTemplate, error) {
	ref, err := s.Store.CurrentTemplateVersion(ctx, accountID, idOrName)
	if err != nil {
		return nil, err
	}
	p, ok := s.cache.get(*ref)
	if !ok {
		t, err := s.Store.TemplateVersion(ctx, accountID, ref.ID, ref.Version)
		if err != nil {
			return nil, err
		}
		if p, _, err = parseTemplate(s.Engine, t); err != nil {
			// Stored templates were parsed before they were stored.
			return nil, err
		}
		s.cache.put(*ref, p)
	}
	return p.render(variables), nil
}

// checkRendered applies the rules of a send to a rendering that is to be
// answered as it is (the render route): the subject's, and the bodies'
// limits. It returns the subject, html and text a send would store: the
// text generated from the html when the template has no text.
func checkRendered(v *Validator, out *RenderedTemplate) (subject, html, text string) {
	if out.Subject == "" {
		v.Add("subject", "renders empty with these variables; a message needs a subject")
	} else if msg := checkSubject(out.Subject); msg != "" {
		v.Add("subject", "as rendered, %s", msg)
	}
	ok := checkBodyPart(v, "html", out.HTML)
	ok = checkBodyPart(v, "text", out.Text) && ok
	text = out.Text
	if ok && text == "" {
		text = HTMLToText(out.HTML)
	}
	return out.Subject, out.HTML, text
}

// parsedCache keeps parsed template versions. A version never changes, so
// entries never go stale; the cache only bounds its size, by forgetting
// everything when full (a template's next send parses it again).
type parsedCache struct {
	mu sync.Mutex
	m  map[TemplateRef]*parsedTemplate
}

// maxParsedTemplates bounds the cache: each entry holds at most two 1 MiB
// sources' parse trees.
const maxParsedTemplates = 256

func (c *parsedCache) get(ref TemplateRef) (*parsedTemplate, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	p, ok := c.m[TemplateRef{ID: ref.ID, Version: ref.Version}]
	return p, ok
}

func (c *parsedCache) put(ref TemplateRef, p *parsedTemplate) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil || len(c.m) >= maxParsedTemplates {
		c.m = map[TemplateRef]*parsedTemplate{}
	}
	c.m[TemplateRef{ID: ref.ID, Version: ref.Version}] = p
}
