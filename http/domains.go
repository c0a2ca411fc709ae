package http

import (
	"net/http"

	"github.com/mailroom/mailroom"
)

// domainJSON is a domain as the API shows it (docs/api.md "Domains").
type domainJSON struct {
	Name          string                `json:"name"`
	Status        mailroom.DomainStatus `json:"status"`
	Records       []mailroom.DNSRecord  `json:"records"`
	CreatedAt     string                `json:"createdAt"`
	VerifiedAt    *string               `json:"verifiedAt"`
	LastCheckedAt *string               `json:"lastCheckedAt"`
	NextCheckAt   *string               `json:"nextCheckAt"`
}

func toDomainJSON(d *mailroom.Domain) domainJSON {
	return domainJSON{
		Name:          d.Name,
		Status:        d.Status,
		Records:       d.Records,
		CreatedAt:     timestamp(d.CreatedAt),
		VerifiedAt:    optTimestamp(d.VerifiedAt),
		LastCheckedAt: optTimestamp(d.LastCheckedAt),
		NextCheckAt:   optTimestamp(d.NextCheckAt),
	}
}

type createDomainRequest struct {
	Name string `json:"name"`
}

// createDomain: POST /v1/domains.
func (s *Server) createDomain(w http.ResponseWriter, r *http.Request) {
	var req createDomainRequest
	if err := decodeJSON(r, &req); err != nil {
		writeError(w, r, err)
		return
	}
	d, err := s.Domains.Add(r.Context(), keyFrom(r.Context()).AccountID, req.Name)
	if err != nil {
		writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusCreated, toDomainJSON(d))
}

// listDomains: GET /v1/domains.
func (s *Server) listDomains(w http.ResponseWriter, r *http.Request) {
	page, err := pageParams(r, scopeDomains)
	if err != nil {
		writeError(w, r, err)
		return
	}
	domains, next, err := s.Store.ListDomains(r.Context(), keyFrom(r.Context()).AccountID, page)
	if err != nil {
		writeError(w, r, err)
		return
	}
	out := make([]domainJSON, len(domains))
	for i, d := range domains {
		out[i] = toDomainJSON(d)
	}
	writeJSON(w, http.StatusOK, newList(out, scopeDomains, next))
}

// getDomain: GET /v1/domains/{domain}.
func (s *Server) getDomain(w http.ResponseWriter, r *http.Request) {
	d, err := s.Store.Domain(r.Context(), keyFrom(r.Context()).AccountID, pathDomain(r))
	if err != nil {
		writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, toDomainJSON(d))
}

// verifyDomain: POST /v1/domains/{domain}/verify checks DNS now. This is
// the one route that waits on DNS: the customer asked for exactly that.
func (s *Server) verifyDomain(w http.ResponseWriter, r *http.Request) {
	d, err := s.Domains.Verify(r.Context(), keyFrom(r.Context()).AccountID, pathDomain(r))
	if err != nil {
		writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, toDomainJSON(d))
}

// deleteDomain: DELETE /v1/domains/{domain}.
func (s *Server) deleteDomain(w http.ResponseWriter, r *http.Request) {
	if err := s.Store.DeleteDomain(r.Context(), keyFrom(r.Context()).AccountID, pathDomain(r)); err != nil {
		writeError(w, r, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

// pathDomain is the {domain} of the path, normalised as names are stored
// (so /v1/domains/Example.COM finds example.com). A name that cannot be
// normalised names no stored domain and is looked up as it is, to 404.
func pathDomain(r *http.Request) string {
	raw := r.PathValue("domain")
	if name, err := mailroom.NormalizeDomainName(raw); err == nil {
		return name
	}
	return raw
}
