package sqlstore

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"slices"

	"github.com/mailroom/mailroom"
)

// Webhook endpoints (docs/api.md "Webhooks and events"). Their deliveries
// are in webhookoutbox.go, their attempts in webhookattempts.go.

const webhookColumns = `id, account_id, url, description, events, enabled, disabled_reason, secret,
	previous_secret, previous_secret_until, failing_since, created_at, updated_at`

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
		err := tx.QueryRowContext(ctx, `SELECT id FROM accounts WHERE id = $1`+s.engine.LockRows, e.AccountID).Scan(new(string))
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
			var v mailroom.Validator
			v.Add("url", "this account has %d webhook endpoints, the most it may have; delete one first (the operator sets the limit with serve --max-webhooks)", n)
			return v.Err()
		}
		events, _ := json.Marshal(e.Events)
		e.CreatedAt, e.UpdatedAt = fromMicros(micros(e.CreatedAt)), fromMicros(micros(e.UpdatedAt))
		_, err = tx.ExecContext(ctx, `INSERT INTO webhook_endpoints (`+webhookColumns+`, event_mask)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14)`,
			e.ID, e.AccountID, e.URL, e.Description, string(events), e.Enabled, e.DisabledReason, e.SecretSealed,
			e.PreviousSecretSealed, microsOrNil(e.PreviousSecretUntil), microsOrNil(e.FailingSince),
			micros(e.CreatedAt), micros(e.UpdatedAt), eventMask(e.Events))
		return s.wrap(err, "create webhook")
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

// UpdateWebhook stores e's changeable fields. Turning it off drops its
// pending deliveries in the same transaction.
func (s *Store) UpdateWebhook(ctx context.Context, e *mailroom.WebhookEndpoint) error {
	events, _ := json.Marshal(e.Events)
	e.UpdatedAt = fromMicros(micros(e.UpdatedAt))
	return s.inTx(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `UPDATE webhook_endpoints SET url = $3, description = $4, events = $5, event_mask = $6,
			enabled = $7, disabled_reason = $8, secret = $9, previous_secret = $10, previous_secret_until = $11,
			failing_since = $12, updated_at = $13 WHERE id = $1 AND account_id = $2`,
			e.ID, e.AccountID, e.URL, e.Description, string(events), eventMask(e.Events), e.Enabled, e.DisabledReason,
			e.SecretSealed, e.PreviousSecretSealed, microsOrNil(e.PreviousSecretUntil), microsOrNil(e.FailingSince), micros(e.UpdatedAt))
		if err != nil {
			return s.wrap(err, "update webhook")
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return mailroom.Errorf(mailroom.ECodeNotFound, "No webhook %q.", e.ID)
		}
		if e.Enabled {
			return nil
		}
		_, err = tx.ExecContext(ctx, `DELETE FROM webhook_deliveries WHERE endpoint_id = $1`, e.ID)
		return s.wrap(err, "drop deliveries of a disabled webhook")
	})
}

// DeleteWebhook removes an endpoint with its deliveries and attempts.
func (s *Store) DeleteWebhook(ctx context.Context, accountID, id string) error {
	return s.inTx(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `DELETE FROM webhook_endpoints WHERE id = $1 AND account_id = $2`, id, accountID)
		if err != nil {
			return s.wrap(err, "delete webhook")
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return mailroom.Errorf(mailroom.ECodeNotFound, "No webhook %q.", id)
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

func scanWebhook(row scanner) (*mailroom.WebhookEndpoint, error) {
	var e mailroom.WebhookEndpoint
	var events string
	var prevUntil, failing sql.NullInt64
	var created, updated int64
	if err := row.Scan(&e.ID, &e.AccountID, &e.URL, &e.Description, &events, &e.Enabled, &e.DisabledReason,
		&e.SecretSealed, &e.PreviousSecretSealed, &prevUntil, &failing, &created, &updated); err != nil {
		return nil, err
	}
	if err := json.Unmarshal([]byte(events), &e.Events); err != nil {
		return nil, err
	}
	e.PreviousSecretUntil, e.FailingSince = fromNullMicros(prevUntil), fromNullMicros(failing)
	e.CreatedAt, e.UpdatedAt = fromMicros(created), fromMicros(updated)
	return &e, nil
}
