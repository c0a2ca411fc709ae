package http

import (
	"net/http"

	"github.com/mailroom/mailroom"
	"github.com/mailroom/mailroom/client/api"
)

// toDomain shows a domain as the API does (docs/api.md "Domains").
func toDomain(d *mailroom.Domain) api.Domain {
	return api.Domain{
		Name:          d.Name,
		Status:        api.DomainStatus(d.Status),
		Records:       toDNSRecords(d.Records),
		CreatedAt:     wireTime(d.CreatedAt),
		VerifiedAt:    optWireTime(d.VerifiedAt),
		LastCheckedAt: optWireTime(d.LastCheckedAt),
		NextCheckAt:   optWireTime(d.NextCheckAt),
		IPPool:        optString(d.IPPool),
		TLS:           api.DomainTLS(d.TLS.OrDefault()),
		Checks:        toHealthChecks(d.Checks),
		DKIMEd25519:   d.DKIMKeyOf(mailroom.DKIMKeyEd25519) != nil,
		Receiving:     d.Receiving,
		OpenTracking:  d.Tracking.Opens,
		ClickTracking: d.Tracking.Clicks,
	}
}

// toDNSRecords shows a domain's records; null when it has none (the
// store always gives a domain its records).
func toDNSRecords(rs []mailroom.DNSRecord) []api.DNSRecord {
	if rs == nil {
		return nil
	}
	out := make([]api.DNSRecord, len(rs))
	for i, r := range rs {
		out[i] = api.DNSRecord{
			Purpose: api.RecordPurpose(r.Purpose), Type: r.Type, Name: r.Name, Value: r.Value, Priority: r.Priority,
			Required: r.Required, Status: api.RecordStatus(r.Status), Found: r.Found, Problem: r.Problem,
			RemovableAfter: optWireTime(r.RemovableAfter),
		}
	}
	return out
}

// createDomain: POST /v1/domains.
func (s *Server) createDomain(w http.ResponseWriter, r *http.Request) {
	var req api.DomainCreateRequest
	if err := decodeJSON(r, &req); err != nil {
		writeError(w, r, err)
		return
	}
	d, err := s.Domains.Add(r.Context(), keyFrom(r.Context()).AccountID, req.Name)
	if err != nil {
		writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusCreated, toDomain(d))
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
	out := make([]api.Domain, len(domains))
	for i, d := range domains {
		out[i] = toDomain(d)
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
	writeJSON(w, http.StatusOK, toDomain(d))
}

// verifyDomain: POST /v1/domains/{domain}/verify checks DNS now. This is
// the one route that waits on DNS: the customer asked for exactly that.
func (s *Server) verifyDomain(w http.ResponseWriter, r *http.Request) {
	d, err := s.Domains.Verify(r.Context(), keyFrom(r.Context()).AccountID, pathDomain(r))
	if err != nil {
		writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, toDomain(d))
}

// updateDomain: PATCH /v1/domains/{domain} changes the settings given ({}
// changes nothing) and answers the domain. An unknown field is refused as
// every request's is (400 validation_error naming it); so is a bad value
// (domain.Service.Update).
func (s *Server) updateDomain(w http.ResponseWriter, r *http.Request) {
	var req api.DomainUpdateRequest
	if err := decodeJSON(r, &req); err != nil {
		writeError(w, r, err)
		return
	}
	var u mailroom.DomainUpdate
	if req.TLS != nil {
		mode := mailroom.TLSMode(*req.TLS)
		u.TLS = &mode
	}
	u.DKIMEd25519 = req.DKIMEd25519
	u.Receiving = req.Receiving
	u.OpenTracking, u.ClickTracking = req.OpenTracking, req.ClickTracking
	d, err := s.Domains.Update(r.Context(), keyFrom(r.Context()).AccountID, pathDomain(r), u)
	if err != nil {
		writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, toDomain(d))
}

// rotateDomainDKIM: POST /v1/domains/{domain}/dkim/rotate starts a
// rotation of the domain's DKIM key (domain.Service.RotateDKIM) and
// answers the domain with the new key's pending record; 409
// invalid_state while one is pending.
func (s *Server) rotateDomainDKIM(w http.ResponseWriter, r *http.Request) {
	d, err := s.Domains.RotateDKIM(r.Context(), keyFrom(r.Context()).AccountID, pathDomain(r))
	if err != nil {
		writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, toDomain(d))
}

// deleteDomain: DELETE /v1/domains/{domain}.
func (s *Server) deleteDomain(w http.ResponseWriter, r *http.Request) {
	if err := s.Domains.Delete(r.Context(), keyFrom(r.Context()).AccountID, pathDomain(r)); err != nil {
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
