package http

import (
	"net/http"
	"time"

	"github.com/mailroom/mailroom"
	"github.com/mailroom/mailroom/audit"
	"github.com/mailroom/mailroom/client/api"
)

// listAuditLog: GET /v1/audit-log, the account's audit log newest first
// (docs/api.md "Audit log"). Its cursors are bound to the filters, as the
// events list's are.
func (s *Server) listAuditLog(w http.ResponseWriter, r *http.Request) {
	if err := onceEach(r, "action", "keyId", "since", "until"); err != nil {
		writeError(w, r, err)
		return
	}
	q := r.URL.Query()
	f, err := s.Audit.Filter(audit.Query{Action: q.Get("action"), KeyID: q.Get("keyId"), Since: q.Get("since"), Until: q.Get("until")})
	if err != nil {
		writeError(w, r, err)
		return
	}
	scope := auditCursorScope(f)
	page, err := pageParams(r, scope)
	if err != nil {
		writeError(w, r, err)
		return
	}
	entries, next, err := s.Audit.List(r.Context(), keyFrom(r.Context()).AccountID, f, page)
	if err != nil {
		writeError(w, r, err)
		return
	}
	out := make([]api.AuditEntry, len(entries))
	for i, e := range entries {
		out[i] = toAuditEntry(e)
	}
	writeJSON(w, http.StatusOK, newList(out, scope, next))
}

// auditCursorScope binds a cursor of GET /v1/audit-log to its filters.
func auditCursorScope(f mailroom.AuditFilter) string {
	scope := "audit-log\x00action=" + string(f.Action) + "\x00keyId=" + f.KeyID
	for _, t := range []struct {
		name string
		at   *time.Time
	}{{"since", f.Since}, {"until", f.Until}} {
		if t.at != nil {
			scope += "\x00" + t.name + "=" + t.at.UTC().Format(time.RFC3339Nano)
		}
	}
	return scope
}

// toAuditEntry shows an entry as the API does: requestId and ip are null
// where there was no request (the CLI, the system), changes never null.
func toAuditEntry(e *mailroom.AuditEntry) api.AuditEntry {
	out := api.AuditEntry{
		ID: e.ID, Action: api.AuditAction(e.Action),
		Actor:     api.AuditActor{Type: api.AuditActorType(e.Actor.Type), KeyID: e.Actor.KeyID},
		Target:    api.AuditTarget{Type: e.Target.Type, ID: e.Target.ID},
		CreatedAt: wireTime(e.CreatedAt),
		Changes:   map[string][2]any(e.Changes),
	}
	if out.Changes == nil {
		out.Changes = map[string][2]any{}
	}
	if e.RequestID != "" {
		out.RequestID = &e.RequestID
	}
	if e.IP != "" {
		out.IP = &e.IP
	}
	return out
}
