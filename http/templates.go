package http

import (
	"net/http"
	"strconv"

	"github.com/mailroom/mailroom"
)

// templateSummaryJSON is a template version as lists show it (docs/api.md
// "Templates"): without its html and text, which may be a megabyte each (a
// page of a hundred would be hundreds). GET the template or the version
// for them.
type templateSummaryJSON struct {
	ID          string                `json:"id"`
	Name        string                `json:"name"`
	Description string                `json:"description"`
	Subject     string                `json:"subject"`
	From        *string               `json:"from"`
	Layout      *mailroom.TemplateRef `json:"layout"`
	Version     int                   `json:"version"`
	Variables   []string              `json:"variables"`
	CreatedAt   string                `json:"createdAt"`
	UpdatedAt   string                `json:"updatedAt"`
}

// templateJSON is a template version whole.
type templateJSON struct {
	templateSummaryJSON
	HTML *string `json:"html"`
	Text *string `json:"text"`
}

func toTemplateSummary(t *mailroom.Template) templateSummaryJSON {
	out := templateSummaryJSON{
		ID: t.ID, Name: t.Name, Description: t.Description, Subject: t.Subject,
		From: optString(t.From), Layout: t.Layout, Version: t.Version, Variables: t.Variables,
		CreatedAt: timestamp(t.CreatedAt), UpdatedAt: timestamp(t.UpdatedAt),
	}
	if out.Variables == nil {
		out.Variables = []string{}
	}
	return out
}

func toTemplateJSON(t *mailroom.Template) templateJSON {
	return templateJSON{templateSummaryJSON: toTemplateSummary(t), HTML: optString(t.HTML), Text: optString(t.Text)}
}

func toTemplateSummaries(ts []*mailroom.Template) []templateSummaryJSON {
	out := make([]templateSummaryJSON, len(ts))
	for i, t := range ts {
		out[i] = toTemplateSummary(t)
	}
	return out
}

// pathTemplate is the {template} of the path: an id or a name.
func pathTemplate(r *http.Request) string { return r.PathValue("template") }

// createTemplate: POST /v1/templates.
func (s *Server) createTemplate(w http.ResponseWriter, r *http.Request) {
	var req mailroom.TemplateRequest
	if err := decodeJSON(r, &req); err != nil {
		writeError(w, r, err)
		return
	}
	t, err := s.Templates.Create(r.Context(), keyFrom(r.Context()).AccountID, &req)
	if err != nil {
		writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusCreated, toTemplateJSON(t))
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
	writeJSON(w, http.StatusOK, toTemplateJSON(t))
}

// updateTemplate: PUT /v1/templates/{template} replaces the content as a
// new version.
func (s *Server) updateTemplate(w http.ResponseWriter, r *http.Request) {
	var req mailroom.TemplateRequest
	if err := decodeJSON(r, &req); err != nil {
		writeError(w, r, err)
		return
	}
	t, err := s.Templates.Update(r.Context(), keyFrom(r.Context()).AccountID, pathTemplate(r), &req)
	if err != nil {
		writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, toTemplateJSON(t))
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
	writeJSON(w, http.StatusOK, toTemplateJSON(t))
}

type renderRequest struct {
	Variables mailroom.Variables `json:"variables,omitempty"`
}

type renderResponse struct {
	Subject string `json:"subject"`
	HTML    string `json:"html"`
	Text    string `json:"text"`
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
	writeJSON(w, http.StatusOK, renderResponse{Subject: out.Subject, HTML: out.HTML, Text: out.Text})
}
