package sqlstore

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"slices"
	"time"

	"github.com/mailroom/mailroom"
)

// Webhook endpoints (docs/api.md "Webhooks and events"). Their deliveries
// are in webhookoutbox.go, their attempts in webhookattempts.go.

const webhookColumns = `id, account_id, url, description, events, enabled, disabled_reason, secret,
	previous_secret, previous_secret_until, failing_since, created_at, updated_at, format`

// eventMask is the bit mask of a subscription list that the fan-out tests:
// bit i stands for mailroom.EventTypes[i], and "*" sets every bit.
func eventMask(events []string) int64 {
	var mask int64
	for _, t := range events {
		if t == mailroom.AllEventTypes {
			return -1
		}
		mask |= eventBit(t)
	}
	return mask
}

// eventBit is the bit of one event type; 0 for webhook.test, which goes
// only to the endpoint a test names, never to "*".
func eventBit(typ string) int64 {
	i := slices.Index(mailroom.EventTypes, typ)
	if i < 0 || typ == mailroom.EventWebhookTest {
		return 0
	}
	return 1 << i
}

// CreateWebhook inserts e if its account has fewer than max endpoints. On
// PostgreSQL the account's row is locked first, so that concurrent creates
// count one after the other.
func (s *Store) CreateWebhook(ctx context.Context, e *mailroom.WebhookEndpoint, max int) error {
	return s.inTx(ctx, func(tx *sql.Tx) error {
		err := tx.QueryRowContext(ctx, `SELECT id FROM accounts WHERE id = $1`+s.dialect.Locks.Rows, e.AccountID).Scan(new(string))
		if errors.Is(err, sql.ErrNoRows) {
			return mailroom.Errorf(mailroom.ECodeNotFound, "No account %q.", e.AccountID)
		}
		if err != nil {
			return s.wrap(err, "lock account")
		}
		var n int
		if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM webhook_endpoints WHERE account_id = $1`, e.AccountID).Scan(&n); err != nil {
			return s.wrap(err, "count webhooks")
		}
		if n >= max {
			return mailroom.WebhookLimit.Err(n, max)
		}
		events, _ := json.Marshal(e.Events)
		e.CreatedAt, e.UpdatedAt = fromMicros(micros(e.CreatedAt)), fromMicros(micros(e.UpdatedAt))
		_, err = tx.ExecContext(ctx, `INSERT INTO webhook_endpoints (`+webhookColumns+`, event_mask)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15)`,
			e.ID, e.AccountID, e.URL, e.Description, string(events), e.Enabled, e.DisabledReason, e.SecretSealed,
			e.PreviousSecretSealed, microsOrNil(e.PreviousSecretUntil), microsOrNil(e.FailingSince),
			micros(e.CreatedAt), micros(e.UpdatedAt), string(formatOrDefault(e.Format)), eventMask(e.Events))
		if err != nil {
			return s.wrap(err, "create webhook")
		}
		return s.recordAudit(ctx, tx, e.AccountID, mailroom.AuditWebhookCreated, webhookTarget(e.ID), mailroom.WebhookCreatedChanges(e))
	})
}

// Webhook finds an account's endpoint.
func (s *Store) Webhook(ctx context.Context, accountID, id string) (*mailroom.WebhookEndpoint, error) {
	e, err := scanWebhook(s.readRow(ctx, `SELECT `+webhookColumns+` FROM webhook_endpoints WHERE id = $1 AND account_id = $2`, id, accountID))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, mailroom.Errorf(mailroom.ECodeNotFound, "No webhook %q.", id)
	}
	return e, s.wrap(err, "webhook")
}

// ListWebhooks lists an account's endpoints, newest first.
func (s *Store) ListWebhooks(ctx context.Context, accountID string, p mailroom.Page) ([]*mailroom.WebhookEndpoint, string, error) {
	after, err := parseCursor(p.Cursor)
	if err != nil {
		return nil, "", err
	}
	limit := pageLimit(p)
	rows, err := s.read.QueryContext(ctx, `SELECT `+webhookColumns+` FROM webhook_endpoints
		WHERE account_id = $1 AND (created_at < $2 OR (created_at = $2 AND id < $3))
		ORDER BY created_at DESC, id DESC LIMIT $4`, accountID, after.at, after.id, limit+1)
	if err != nil {
		return nil, "", s.wrap(err, "list webhooks")
	}
	out, err := collect(rows, scanWebhook)
	if err != nil {
		return nil, "", s.wrap(err, "list webhooks")
	}
	out, next := trimPage(out, limit, func(x *mailroom.WebhookEndpoint) cursor { return cursor{at: micros(x.CreatedAt), id: x.ID} })
	return out, next, nil
}

// UpdateWebhook applies c in one UPDATE whose SET reads the row as it is
// (COALESCE keeps what c leaves out), so that no field the dispatcher
// writes meanwhile (failing time, an automatic disable) is put back. The
// enabled state's companions change only when it does.
func (s *Store) UpdateWebhook(ctx context.Context, accountID, id string, c mailroom.WebhookChange, now time.Time) (*mailroom.WebhookEndpoint, error) {
	var events, mask any
	if c.Events != nil {
		b, _ := json.Marshal(c.Events)
		events, mask = string(b), eventMask(c.Events)
	}
	var url, description, enabled, format any
	if c.Format != nil {
		format = string(formatOrDefault(*c.Format))
	}
	if c.URL != nil {
		url = *c.URL
	}
	if c.Description != nil {
		description = *c.Description
	}
	if c.Enabled != nil {
		enabled = *c.Enabled
	}
	var e *mailroom.WebhookEndpoint
	err := s.inTx(ctx, func(tx *sql.Tx) error {
		// The endpoint as it was, under its lock, for the audit entry.
		before, err := scanWebhook(tx.QueryRowContext(ctx, `SELECT `+webhookColumns+` FROM webhook_endpoints
			WHERE id = $1 AND account_id = $2`+s.dialect.Locks.Rows, id, accountID))
		if errors.Is(err, sql.ErrNoRows) {
			return mailroom.Errorf(mailroom.ECodeNotFound, "No webhook %q.", id)
		}
		if err != nil {
			return s.wrap(err, "update webhook")
		}
		e, err = scanWebhook(tx.QueryRowContext(ctx, `UPDATE webhook_endpoints SET
			url = COALESCE($3, url), description = COALESCE($4, description),
			events = COALESCE($5, events), event_mask = COALESCE($6, event_mask),
			disabled_reason = CASE WHEN CAST($7 AS BOOLEAN) IS NULL OR CAST($7 AS BOOLEAN) = enabled THEN disabled_reason
				WHEN CAST($7 AS BOOLEAN) THEN '' ELSE $8 END,
			failing_since = CASE WHEN CAST($7 AS BOOLEAN) IS NULL OR CAST($7 AS BOOLEAN) = enabled THEN failing_since ELSE NULL END,
			enabled = COALESCE(CAST($7 AS BOOLEAN), enabled), updated_at = $9, format = COALESCE($10, format)
			WHERE id = $1 AND account_id = $2 RETURNING `+webhookColumns,
			id, accountID, url, description, events, mask, enabled, c.DisabledReason, micros(now), format))
		if errors.Is(err, sql.ErrNoRows) {
			return mailroom.Errorf(mailroom.ECodeNotFound, "No webhook %q.", id)
		}
		if err != nil {
			return s.wrap(err, "update webhook")
		}
		if c := mailroom.WebhookUpdatedChanges(before, e); len(c) > 0 {
			if err := s.recordAudit(ctx, tx, accountID, mailroom.AuditWebhookUpdated, webhookTarget(id), c); err != nil {
				return err
			}
		}
		if e.Enabled {
			return nil
		}
		_, err = tx.ExecContext(ctx, `DELETE FROM webhook_deliveries WHERE endpoint_id = $1`, id)
		return s.wrap(err, "drop deliveries of a disabled webhook")
	})
	return e, err
}

// RotateWebhookSecret moves the current secret to previous and stores the
// new one, in one statement, with its audit entry (webhook.secret_rotated,
// which holds no secret).
func (s *Store) RotateWebhookSecret(ctx context.Context, accountID, id string, sealed []byte, previousUntil, now time.Time) (*mailroom.WebhookEndpoint, error) {
	var e *mailroom.WebhookEndpoint
	err := s.inTx(ctx, func(tx *sql.Tx) error {
		var err error
		e, err = scanWebhook(tx.QueryRowContext(ctx, `UPDATE webhook_endpoints SET previous_secret = secret,
			previous_secret_until = $3, secret = $4, updated_at = $5 WHERE id = $1 AND account_id = $2 RETURNING `+webhookColumns,
			id, accountID, micros(previousUntil), sealed, micros(now)))
		if errors.Is(err, sql.ErrNoRows) {
			return mailroom.Errorf(mailroom.ECodeNotFound, "No webhook %q.", id)
		}
		if err != nil {
			return s.wrap(err, "rotate webhook secret")
		}
		return s.recordAudit(ctx, tx, accountID, mailroom.AuditWebhookSecretRotated, webhookTarget(id),
			mailroom.WebhookSecretRotatedChanges(previousUntil))
	})
	if err != nil {
		return nil, err
	}
	return e, nil
}

// webhookTarget names an endpoint in the audit log.
func webhookTarget(id string) mailroom.AuditTarget {
	return mailroom.AuditTarget{Type: mailroom.AuditTargetWebhook, ID: id}
}

// DeleteWebhook removes an endpoint with its deliveries and attempts.
func (s *Store) DeleteWebhook(ctx context.Context, accountID, id string) error {
	return s.inTx(ctx, func(tx *sql.Tx) error {
		var url string
		err := tx.QueryRowContext(ctx, `DELETE FROM webhook_endpoints WHERE id = $1 AND account_id = $2 RETURNING url`, id, accountID).Scan(&url)
		if errors.Is(err, sql.ErrNoRows) {
			return mailroom.Errorf(mailroom.ECodeNotFound, "No webhook %q.", id)
		}
		if err != nil {
			return s.wrap(err, "delete webhook")
		}
		if err := s.recordAudit(ctx, tx, accountID, mailroom.AuditWebhookDeleted, webhookTarget(id),
			mailroom.WebhookDeletedChanges(&mailroom.WebhookEndpoint{URL: url})); err != nil {
			return err
		}
		// The foreign keys cascade; these say so for an engine that
		// would not.
		for _, table := range []string{"webhook_deliveries", "webhook_attempts"} {
			if _, err := tx.ExecContext(ctx, `DELETE FROM `+table+` WHERE endpoint_id = $1`, id); err != nil {
				return s.wrap(err, "delete webhook")
			}
		}
		return nil
	})
}

// formatOrDefault is the format stored for f: Mailroom's when none was
// given.
func formatOrDefault(f mailroom.WebhookFormat) mailroom.WebhookFormat {
	if f == "" {
		return mailroom.WebhookFormatMailroom
	}
	return f
}

func scanWebhook(row scanner) (*mailroom.WebhookEndpoint, error) {
	var e mailroom.WebhookEndpoint
	var events string
	var prevUntil, failing sql.NullInt64
	var created, updated int64
	if err := row.Scan(&e.ID, &e.AccountID, &e.URL, &e.Description, &events, &e.Enabled, &e.DisabledReason,
		&e.SecretSealed, &e.PreviousSecretSealed, &prevUntil, &failing, &created, &updated, &e.Format); err != nil {
		return nil, err
	}
	if err := json.Unmarshal([]byte(events), &e.Events); err != nil {
		return nil, err
	}
	e.PreviousSecretUntil, e.FailingSince = fromNullMicros(prevUntil), fromNullMicros(failing)
	e.CreatedAt, e.UpdatedAt = fromMicros(created), fromMicros(updated)
	return &e, nil
}
