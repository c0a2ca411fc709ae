package mailroom

import (
	"context"
	"time"
)

// Template is a saved template in one of its versions (docs/api.md
// "Templates"): the Mustache sources of a message's subject and bodies, and
// optionally its sender. Every PUT makes a new version; the earlier ones stay
// readable, and messages name the version they were rendered from.
type Template struct {
	ID        string // "tpl_…"
	AccountID string
	// Name is the template's slug, unique in its account; sends and routes
	// may name a template by it instead of its id.
	Name        string
	Description string
	Subject     string
	HTML        string
	Text        string
	// From is the sender a send uses when it gives none; "" for none.
	From string
	// Layout is the template version this one is wrapped in, nil for
	// none: its {{{content}}} is this template's rendering. The version
	// is the layout's current one when this version was saved, so that
	// editing a layout changes no template until it is saved again.
	Layout *TemplateRef
	// Version counts from 1; each PUT adds one.
	Version int
	// Variables lists every name the sources use, dotted names whole,
	// sorted (docs/api.md "Templates").
	Variables []string
	// CreatedAt is when the template was created; UpdatedAt when this
	// version was saved.
	CreatedAt time.Time
	UpdatedAt time.Time
}

// Ref is what a message records of the template it was rendered from.
func (t *Template) Ref() *TemplateRef {
	return &TemplateRef{ID: t.ID, Name: t.Name, Version: t.Version}
}

// TemplateRef names one version of a template: what the email log shows of a
// message sent with a template. The name is the one the template had then.
type TemplateRef struct {
	ID      string `json:"id"`
	Name    string `json:"name"`
	Version int    `json:"version"`
}

// TemplateStore keeps templates and all their versions.
type TemplateStore interface {
	// CreateTemplate inserts t as version 1 (and sets t.Version). A name
	// the account already
	// has is ECodeAlreadyExists; an account that already has max templates
	// gets ECodeValidation.
	CreateTemplate(ctx context.Context, t *Template, max int) error
	// UpdateTemplate stores t's content as the next version of the
	// account's template t.ID, and sets t.Version, t.Name, t.CreatedAt and
	// t.UpdatedAt to what was stored. Concurrent updates each get a version
	// of their own, in the order they commit. A deleted template is
	// ECodeNotFound. A template that already has max versions is refused
	// (TemplateVersionLimit's refusal) and nothing is stored, counted so that
	// concurrent updates cannot pass max together. No version is ever
	// removed but with its template.
	UpdateTemplate(ctx context.Context, t *Template, max int) error
	// Template finds an account's template by id ("tpl_…") or name, in its
	// current version.
	Template(ctx context.Context, accountID, idOrName string) (*Template, error)
	// CurrentTemplateVersion is the id, name and current version alone of an
	// account's template (by id or name): what a send reads before it
	// looks in the parsed-template cache.
	CurrentTemplateVersion(ctx context.Context, accountID, idOrName string) (*TemplateRef, error)
	// TemplateVersion reads one version of an account's template by id.
	TemplateVersion(ctx context.Context, accountID, id string, version int) (*Template, error)
	// ListTemplates lists an account's templates, current versions, newest
	// first, without their HTML and Text (lists do not show them).
	ListTemplates(ctx context.Context, accountID string, page Page) ([]*Template, string, error)
	// ListTemplateVersions lists the versions of an account's template
	// (by id or name), newest first, without their HTML and Text.
	ListTemplateVersions(ctx context.Context, accountID, idOrName string, page Page) ([]*Template, string, error)
	// DeleteTemplate removes an account's template (by id or name) and all
	// its versions. Messages sent with it keep what they recorded.
	DeleteTemplate(ctx context.Context, accountID, idOrName string) error
}

// RenderedTemplate is a template rendered for one send or render request:
// what the message will hold, or the problems that stop it.
type RenderedTemplate struct {
	Ref     *TemplateRef
	From    string // the template's sender, "" for none
	Subject string
	HTML    string
	Text    string
	// Problems are the request's mistakes found while rendering (a
	// missing variable, a rendering past the limits), reported with the
	// rest of the request's (Validator.merge).
	Problems Validator
}

// Failed reports whether rendering found problems.
func (r *RenderedTemplate) Failed() bool { return len(r.Problems.details) > 0 }
