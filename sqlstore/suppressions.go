package sqlstore

import (
	"context"
	"database/sql"
	"errors"

	"github.com/mailroom/mailroom"
)

const suppressionColumns = `account_id, address, reason, message_id, created_at`

// Suppressed addresses are kept as mailroom.AddressKey (lower case): the
// list matches an address whatever its case.

// AddSuppression adds an address, or returns the entry already there (an
// unsubscribe replaced by any other reason).
func (s *Store) AddSuppression(ctx context.Context, sup *mailroom.Suppression) (*mailroom.Suppression, error) {
	var out *mailroom.Suppression
	err := s.inTx(ctx, func(tx *sql.Tx) error {
		// The entry before, for the audit entry (suppression.created),
		// written only when the list changed: an API request's, or an
		// unsubscribe link's (the system's). The additions of bounces and
		// complaints (addSuppression from delivery and reports) are the
		// messages' events, not audited.
		before, err := scanSuppression(tx.QueryRowContext(ctx, `SELECT `+suppressionColumns+` FROM suppressions
			WHERE account_id = $1 AND address = $2`+s.dialect.Locks.Rows, sup.AccountID, mailroom.AddressKey(sup.Address)))
		if errors.Is(err, sql.ErrNoRows) {
			before = nil
		} else if err != nil {
			return s.wrap(err, "add suppression")
		}
		out, err = s.addSuppression(ctx, tx, sup)
		if err != nil {
			return err
		}
		if c := mailroom.SuppressionChanges(before, out); len(c) > 0 {
			return s.recordAudit(ctx, tx, out.AccountID, mailroom.AuditSuppressionCreated, suppressionTarget(out.Address), c)
		}
		return nil
	})
	return out, err
}

// suppressionTarget names an entry of the list by its address, as the API
// does.
func suppressionTarget(address string) mailroom.AuditTarget {
	return mailroom.AuditTarget{Type: mailroom.AuditTargetSuppression, ID: address}
}

func (s *Store) addSuppression(ctx context.Context, tx *sql.Tx, sup *mailroom.Suppression) (*mailroom.Suppression, error) {
	c := *sup
	c.Address = mailroom.AddressKey(sup.Address)
	sup = &c
	// An existing entry is kept, except that an unsubscribe (which stops
	// marketing mail only) gives way to any other reason, which stops all
	// mail: mailroom.SuppressionReason.Outranks. A hard bounce after an
	// unsubscribe must stop the transactional mail too.
	if _, err := s.txExec(ctx, tx, `INSERT INTO suppressions (`+suppressionColumns+`) VALUES ($1, $2, $3, $4, $5)
		ON CONFLICT (account_id, address) DO UPDATE SET reason = excluded.reason, message_id = excluded.message_id,
			created_at = excluded.created_at
		WHERE suppressions.reason = '`+string(mailroom.SuppressedUnsubscribe)+`' AND excluded.reason <> '`+string(mailroom.SuppressedUnsubscribe)+`'`,
		sup.AccountID, sup.Address, string(sup.Reason), nullString(sup.MessageID), micros(sup.CreatedAt)); err != nil {
		return nil, s.wrap(err, "add suppression")
	}
	out, err := scanSuppression(s.txQueryRow(ctx, tx, `SELECT `+suppressionColumns+` FROM suppressions
		WHERE account_id = $1 AND address = $2`, sup.AccountID, sup.Address))
	return out, s.wrap(err, "add suppression")
}

// Suppression finds one entry.
func (s *Store) Suppression(ctx context.Context, accountID, address string) (*mailroom.Suppression, error) {
	address = mailroom.AddressKey(address)
	out, err := scanSuppression(s.read.QueryRowContext(ctx, `SELECT `+suppressionColumns+` FROM suppressions
		WHERE account_id = $1 AND address = $2`, accountID, address))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, mailroom.Errorf(mailroom.ECodeNotFound, "%s is not suppressed.", address)
	}
	return out, s.wrap(err, "find suppression")
}

// ListSuppressions lists an account's entries, newest first.
func (s *Store) ListSuppressions(ctx context.Context, accountID string, p mailroom.Page) ([]*mailroom.Suppression, string, error) {
	after, err := parseCursor(p.Cursor)
	if err != nil {
		return nil, "", err
	}
	limit := pageLimit(p)
	rows, err := s.read.QueryContext(ctx, `SELECT `+suppressionColumns+` FROM suppressions
		WHERE account_id = $1 AND (created_at < $2 OR (created_at = $2 AND address < $3))
		ORDER BY created_at DESC, address DESC LIMIT $4`, accountID, after.at, after.id, limit+1)
	if err != nil {
		return nil, "", s.wrap(err, "list suppressions")
	}
	out, err := collect(rows, scanSuppression)
	if err != nil {
		return nil, "", s.wrap(err, "list suppressions")
	}
	out, next := trimPage(out, limit, func(x *mailroom.Suppression) cursor { return cursor{at: micros(x.CreatedAt), id: x.Address} })
	return out, next, nil
}

// DeleteSuppression removes an entry: the address may be sent to again.
// The audit entry (suppression.deleted) is written in the same
// transaction.
func (s *Store) DeleteSuppression(ctx context.Context, accountID, address string) error {
	address = mailroom.AddressKey(address)
	return s.inTx(ctx, func(tx *sql.Tx) error {
		var reason string
		err := tx.QueryRowContext(ctx, `DELETE FROM suppressions WHERE account_id = $1 AND address = $2 RETURNING reason`,
			accountID, address).Scan(&reason)
		if errors.Is(err, sql.ErrNoRows) {
			return mailroom.Errorf(mailroom.ECodeNotFound, "%s is not suppressed.", address)
		}
		if err != nil {
			return s.wrap(err, "delete suppression")
		}
		return s.recordAudit(ctx, tx, accountID, mailroom.AuditSuppressionDeleted, suppressionTarget(address),
			mailroom.SuppressionChanges(&mailroom.Suppression{Address: address, Reason: mailroom.SuppressionReason(reason)}, nil))
	})
}

func scanSuppression(row scanner) (*mailroom.Suppression, error) {
	var sup mailroom.Suppression
	var reason string
	var msg sql.NullString
	var created int64
	if err := row.Scan(&sup.AccountID, &sup.Address, &reason, &msg, &created); err != nil {
		return nil, err
	}
	sup.Reason, sup.MessageID, sup.CreatedAt = mailroom.SuppressionReason(reason), msg.String, fromMicros(created)
	return &sup, nil
}
