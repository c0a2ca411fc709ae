package http

import (
	"context"
	"net/http"

	"github.com/mailroom/mailroom"
	"github.com/mailroom/mailroom/resend"
)

// Resend's domain routes (docs/api.md "Moving from Resend";
// https://resend.com/docs/api-reference/domains) over domain.Service, as
// /v1/domains. Each route takes the id the create answered (dom_…) or
// the name (domain.Service.FindDomain).

// resendCreateDomain: POST /domains {name, tls?, open_tracking?,
// click_tracking?}.
func (s *Server) resendCreateDomain(w http.ResponseWriter, r *http.Request) {
	var req resend.CreateDomainRequest
	if err := decodeResendJSON(r, &req); err != nil {
		writeError(w, r, err)
		return
	}
	u, err := req.Update()
	if err != nil {
		writeError(w, r, err)
		return
	}
	d, err := s.Domains.AddWithSettings(r.Context(), keyFrom(r.Context()).AccountID, req.Name, u)
	if err != nil {
		writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, resend.ToCreatedDomain(d))
}

// resendListDomains: GET /domains, newest first.
func (s *Server) resendListDomains(w http.ResponseWriter, r *http.Request) {
	win, err := resend.ParseListWindow(r.URL.Query(), 0)
	if err != nil {
		writeError(w, r, err)
		return
	}
	accountID := keyFrom(r.Context()).AccountID
	all, truncated, err := readWhole(r.Context(), func(ctx context.Context, p mailroom.Page) ([]*mailroom.Domain, string, error) {
		return s.Store.ListDomains(ctx, accountID, p)
	})
	if err != nil {
		writeError(w, r, err)
		return
	}
	page, more, err := resend.Select(win, all, func(d *mailroom.Domain) string { return d.ID })
	if err != nil {
		writeError(w, r, err)
		return
	}
	out := resend.DomainList{Object: "list", HasMore: more || (truncated && win.Before == ""), Data: make([]resend.Domain, len(page))}
	for i, d := range page {
		out.Data[i] = resend.ToDomain(d)
	}
	writeJSON(w, http.StatusOK, out)
}

// resendDomain is the account's domain the path's {id} names.
func (s *Server) resendDomain(r *http.Request) (*mailroom.Domain, error) {
	return s.Domains.FindDomain(r.Context(), keyFrom(r.Context()).AccountID, r.PathValue("id"))
}

// resendGetDomain: GET /domains/{id}.
func (s *Server) resendGetDomain(w http.ResponseWriter, r *http.Request) {
	d, err := s.resendDomain(r)
	if err != nil {
		writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, resend.ToDomain(d))
}

// resendUpdateDomain: PATCH /domains/{id} {tls?, open_tracking?,
// click_tracking?} through the update PATCH /v1/domains/{domain} makes;
// it answers the domain as it now is (Resend answers {object, id}, which
// this holds).
func (s *Server) resendUpdateDomain(w http.ResponseWriter, r *http.Request) {
	var req resend.UpdateDomainRequest
	if err := decodeResendJSON(r, &req); err != nil {
		writeError(w, r, err)
		return
	}
	u, err := req.Update()
	if err != nil {
		writeError(w, r, err)
		return
	}
	d, err := s.resendDomain(r)
	if err != nil {
		writeError(w, r, err)
		return
	}
	if d, err = s.Domains.Update(r.Context(), d.AccountID, d.Name, u); err != nil {
		writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, resend.ToDomain(d))
}

// resendDeleteDomain: DELETE /domains/{id}.
func (s *Server) resendDeleteDomain(w http.ResponseWriter, r *http.Request) {
	d, err := s.resendDomain(r)
	if err != nil {
		writeError(w, r, err)
		return
	}
	if err := s.Domains.Delete(r.Context(), d.AccountID, d.Name); err != nil {
		writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, resend.DeletedDomain{Object: "domain", ID: d.ID, Deleted: true})
}

// resendVerifyDomain: POST /domains/{id}/verify checks the records now,
// as POST /v1/domains/{domain}/verify does, and answers the domain named
// (GET shows what the check found).
func (s *Server) resendVerifyDomain(w http.ResponseWriter, r *http.Request) {
	d, err := s.resendDomain(r)
	if err != nil {
		writeError(w, r, err)
		return
	}
	if _, err := s.Domains.Verify(r.Context(), d.AccountID, d.Name); err != nil {
		writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, resend.DomainRef{Object: "domain", ID: d.ID})
}
