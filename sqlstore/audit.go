package sqlstore

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/mailroom/mailroom"
)

// The audit log (docs/api.md "Audit log", migration 00023). Each store
// method that changes what the log covers calls recordAudit inside its own
// transaction, after the change and only when the change happened, so that
// an entry exists exactly when its change does: a rollback takes both.

const auditColumns = `id, account_id, action, actor_type, actor_key_id, target_type, target_id, request_id, ip, changes, created_at`

// recordAudit writes one entry for a change made in tx, by the origin ctx
// carries (mailroom.AuditOriginFrom: the system when none). changes are
// made by the root's audit change functions, which never hold a secret.
func (s *Store) recordAudit(ctx context.Context, tx *sql.Tx, accountID string, action mailroom.AuditAction,
	target mailroom.AuditTarget, changes mailroom.AuditChanges) error {
	o := mailroom.AuditOriginFrom(ctx)
	if changes == nil {
		changes = mailroom.AuditChanges{}
	}
	b, err := json.Marshal(changes)
	if err != nil {
		return fmt.Errorf("audit changes of %s: %w", action, err)
	}
	now := time.Now()
	keyID := ""
	if o.Actor.Type == mailroom.AuditByAPIKey {
		keyID = o.Actor.KeyID
	}
	_, err = tx.ExecContext(ctx, `INSERT INTO audit_log (`+auditColumns+`) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)`,
		mailroom.NewAuditID(now), accountID, string(action), string(o.Actor.Type), keyID,
		target.Type, target.ID, o.RequestID, o.IP, string(b), micros(now))
	return s.wrap(err, "record audit entry")
}

// ListAuditEntries lists an account's entries newest first, by (created_at,
// id) as the other lists; audit_log_by_account serves every filter.
func (s *Store) ListAuditEntries(ctx context.Context, accountID string, f mailroom.AuditFilter, p mailroom.Page) ([]*mailroom.AuditEntry, string, error) {
	after, err := parseCursor(p.Cursor)
	if err != nil {
		return nil, "", err
	}
	limit := pageLimit(p)
	where := []string{`account_id = $1`, `(created_at < $2 OR (created_at = $2 AND id < $3))`}
	args := []any{accountID, after.at, after.id}
	add := func(cond string, v any) {
		args = append(args, v)
		where = append(where, fmt.Sprintf(cond, len(args)))
	}
	if f.Action != "" {
		add(`action = $%d`, string(f.Action))
	}
	if f.KeyID != "" {
		add(`actor_key_id = $%d`, f.KeyID)
	}
	if f.Since != nil {
		add(`created_at >= $%d`, micros(*f.Since))
	}
	if f.Until != nil {
		add(`created_at < $%d`, micros(*f.Until))
	}
	args = append(args, limit+1)
	rows, err := s.read.QueryContext(ctx, `SELECT `+auditColumns+` FROM audit_log WHERE `+strings.Join(where, " AND ")+
		fmt.Sprintf(` ORDER BY created_at DESC, id DESC LIMIT $%d`, len(args)), args...)
	if err != nil {
		return nil, "", s.wrap(err, "list audit entries")
	}
	out, err := collect(rows, scanAuditEntry)
	if err != nil {
		return nil, "", s.wrap(err, "list audit entries")
	}
	out, next := trimPage(out, limit, func(x *mailroom.AuditEntry) cursor { return cursor{at: micros(x.CreatedAt), id: x.ID} })
	return out, next, nil
}

// DeleteExpiredAuditEntries removes up to limit entries created before
// cutoff, oldest first, in one statement (audit_log_created serves it), so
// that retention holds the write lock for one bounded batch at a time.
func (s *Store) DeleteExpiredAuditEntries(ctx context.Context, cutoff time.Time, limit int) (int, error) {
	res, err := s.write.ExecContext(ctx, `DELETE FROM audit_log WHERE id IN (
		SELECT id FROM audit_log WHERE created_at < $1 ORDER BY created_at LIMIT $2)`, micros(cutoff), limit)
	if err != nil {
		return 0, s.wrap(err, "delete expired audit entries")
	}
	n, err := res.RowsAffected()
	return int(n), s.wrap(err, "delete expired audit entries")
}

func scanAuditEntry(row scanner) (*mailroom.AuditEntry, error) {
	var e mailroom.AuditEntry
	var action, actor, changes string
	var created int64
	if err := row.Scan(&e.ID, &e.AccountID, &action, &actor, &e.Actor.KeyID, &e.Target.Type, &e.Target.ID,
		&e.RequestID, &e.IP, &changes, &created); err != nil {
		return nil, err
	}
	e.Action, e.Actor.Type, e.CreatedAt = mailroom.AuditAction(action), mailroom.AuditActorType(actor), fromMicros(created)
	if err := json.Unmarshal([]byte(changes), &e.Changes); err != nil {
		return nil, fmt.Errorf("audit entry %s changes: %w", e.ID, err)
	}
	return &e, nil
}
