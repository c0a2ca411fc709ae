package http

import (
	"net/http"
	"strconv"

	"github.com/mailroom/mailroom"
	"github.com/mailroom/mailroom/client/api"
	"github.com/mailroom/mailroom/template"
)

// toTemplateSummary shows a template version as lists show it (docs/api.md
// "Templates"): without its html and text, which may be a megabyte each (a
// page of a hundred would be hundreds). GET the template or the version
// for them.
func toTemplateSummary(t *mailroom.Template) api.TemplateSummary {
	out := api.TemplateSummary{
		ID: t.ID, Name: t.Name, Description: t.Description, Subject: t.Subject,
		From: optString(t.From), Layout: toTemplateRef(t.Layout), Version: t.Version, Variables: t.Variables,
		CreatedAt: wireTime(t.CreatedAt), UpdatedAt: wireTime(t.UpdatedAt),
	}
	if out.Variables == nil {
		out.Variables = []string{}
	}
	return out
}

// toTemplate shows a template version whole.
func toTemplate(t *mailroom.Template) api.Template {
	return api.Template{TemplateSummary: toTemplateSummary(t), HTML: optString(t.HTML), Text: optString(t.Text)}
}

func toTemplateSummaries(ts []*mailroom.Template) []api.TemplateSummary {
	out := make([]api.TemplateSummary, len(ts))
	for i, t := range ts {
		out[i] = toTemplateSummary(t)
	}
	return out
}

// toTemplateRef names a template version (a message's template, a
// template's layout); nil (null) for none.
func toTemplateRef(ref *mailroom.TemplateRef) *api.TemplateRef {
	if ref == nil {
		return nil
	}
	return &api.TemplateRef{ID: ref.ID, Name: ref.Name, Version: ref.Version}
}

// pathTemplate is the {template} of the path: an id or a name.
func pathTemplate(r *http.Request) string { return r.PathValue("template") }

// createTemplate: POST /v1/templates.
func (s *Server) createTemplate(w http.ResponseWriter, r *http.Request) {
	var req template.Request
	if err := decodeJSON(r, &req); err != nil {
		writeError(w, r, err)
		return
	}
	t, err := s.Templates.Create(r.Context(), keyFrom(r.Context()).AccountID, &req)
	if err != nil {
		writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusCreated, toTemplate(t))
}

// listTemplates: GET /v1/templates, each in its current version.
func (s *Server) listTemplates(w http.ResponseWriter, r *http.Request) {
	page, err := pageParams(r, scopeTemplates)
	if err != nil {
		writeError(w, r, err)
		return
	}
	ts, next, err := s.Store.ListTemplates(r.Context(), keyFrom(r.Context()).AccountID, page)
	if err != nil {
		writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, newList(toTemplateSummaries(ts), scopeTemplates, next))
}

// getTemplate: GET /v1/templates/{template}, the current version.
func (s *Server) getTemplate(w http.ResponseWriter, r *http.Request) {
	t, err := s.Store.Template(r.Context(), keyFrom(r.Context()).AccountID, pathTemplate(r))
	if err != nil {
		writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, toTemplate(t))
}

// updateTemplate: PUT /v1/templates/{template} replaces the content as a
// new version.
func (s *Server) updateTemplate(w http.ResponseWriter, r *http.Request) {
	var req template.Request
	if err := decodeJSON(r, &req); err != nil {
		writeError(w, r, err)
		return
	}
	t, err := s.Templates.Update(r.Context(), keyFrom(r.Context()).AccountID, pathTemplate(r), &req)
	if err != nil {
		writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, toTemplate(t))
}

// deleteTemplate: DELETE /v1/templates/{template}.
func (s *Server) deleteTemplate(w http.ResponseWriter, r *http.Request) {
	if err := s.Store.DeleteTemplate(r.Context(), keyFrom(r.Context()).AccountID, pathTemplate(r)); err != nil {
		writeError(w, r, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

// listTemplateVersions: GET /v1/templates/{template}/versions, newest
// first, each with its content. Its cursors are bound to the template.
func (s *Server) listTemplateVersions(w http.ResponseWriter, r *http.Request) {
	scope := scopeTemplates + "/" + pathTemplate(r) + "/versions"
	page, err := pageParams(r, scope)
	if err != nil {
		writeError(w, r, err)
		return
	}
	ts, next, err := s.Store.ListTemplateVersions(r.Context(), keyFrom(r.Context()).AccountID, pathTemplate(r), page)
	if err != nil {
		writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, newList(toTemplateSummaries(ts), scope, next))
}

// getTemplateVersion: GET /v1/templates/{template}/versions/{version}.
func (s *Server) getTemplateVersion(w http.ResponseWriter, r *http.Request) {
	accountID := keyFrom(r.Context()).AccountID
	raw := r.PathValue("version")
	version, err := strconv.Atoi(raw)
	if err != nil || version < 1 || strconv.Itoa(version) != raw { // one spelling: not 01 or +1
		writeError(w, r, mailroom.Errorf(mailroom.ECodeNotFound, "No version %q of template %q: versions are numbered from 1.", r.PathValue("version"), pathTemplate(r)))
		return
	}
	ref, err := s.Store.CurrentTemplateVersion(r.Context(), accountID, pathTemplate(r))
	if err != nil {
		writeError(w, r, err)
		return
	}
	t, err := s.Store.TemplateVersion(r.Context(), accountID, ref.ID, version)
	if err != nil {
		writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, toTemplate(t))
}

// renderRequest is api.TemplateRenderRequest as the service reads it: its
// variables kept as the JSON text they came as (mailroom.Variables), as a
// send's are, so that a number keeps every digit.
type renderRequest struct {
	Variables mailroom.Variables `json:"variables,omitempty"`
}

// renderTemplate: POST /v1/templates/{template}/render answers what a send
// with these variables would store; it sends nothing.
func (s *Server) renderTemplate(w http.ResponseWriter, r *http.Request) {
	var req renderRequest
	if err := decodeJSON(r, &req); err != nil {
		writeError(w, r, err)
		return
	}
	out, err := s.Templates.Render(r.Context(), keyFrom(r.Context()).AccountID, pathTemplate(r), req.Variables)
	if err != nil {
		writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, api.TemplateRendered{Subject: out.Subject, HTML: out.HTML, Text: out.Text})
}
