// Package audit serves the audit log (docs/api.md "Audit log"): who changed
// what in an account, and when. The entries are written by the store, in
// the transaction of each change (sqlstore/audit.go), by the origin the
// context carries (mailroom.WithAuditOrigin: the API's middleware, the
// CLI); this package reads them. Retention removes them after
// --audit-retention (package retention's Sweeper).
package audit

import (
	"context"

	"github.com/mailroom/mailroom"
)

// Service lists an account's audit log.
type Service struct {
	Store mailroom.AuditStore
}

// Query is GET /v1/audit-log's filters as the client gave them ("" for
// absent): an action name, a key id, and RFC 3339 times.
type Query struct {
	Action, KeyID, Since, Until string
}

// Filter checks q: an unknown action or a time that is not RFC 3339 is
// ECodeValidation, never a list that silently matches nothing.
func (s *Service) Filter(q Query) (mailroom.AuditFilter, error) {
	return mailroom.NewAuditFilter(q.Action, q.KeyID, q.Since, q.Until)
}

// List lists the account's entries that f selects, newest first: only its
// own, whoever asks.
func (s *Service) List(ctx context.Context, accountID string, f mailroom.AuditFilter, page mailroom.Page) ([]*mailroom.AuditEntry, string, error) {
	return s.Store.ListAuditEntries(ctx, accountID, f, page)
}
