package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"strings"
	"time"

	"github.com/mailroom/mailroom"
)

const apiKeyColumns = `key_id, account_id, name, scopes, secret_digest, created_at, last_used_at, revoked_at, domain`

// CreateAPIKey inserts k and its audit entry (api_key.created) in one
// transaction.
func (s *Store) CreateAPIKey(ctx context.Context, k *mailroom.APIKey) error {
	return s.inTx(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx,
			`INSERT INTO api_keys (`+apiKeyColumns+`) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`,
			k.KeyID, k.AccountID, k.Name, k.Scopes.String(), k.SecretDigest,
			micros(k.CreatedAt), microsOrNil(k.LastUsedAt), microsOrNil(k.RevokedAt), k.Domain)
		if err != nil && s.dialect.Errors.UniqueViolation(err) {
			return mailroom.Errorf(mailroom.ECodeAlreadyExists, "Key id %q is taken.", k.KeyID)
		}
		if err != nil {
			return s.wrap(err, "create api key")
		}
		return s.recordAudit(ctx, tx, k.AccountID, mailroom.AuditAPIKeyCreated,
			mailroom.AuditTarget{Type: mailroom.AuditTargetAPIKey, ID: k.KeyID}, mailroom.APIKeyCreatedChanges(k))
	})
}

// APIKey finds a key by id, read after the call began (keyReads batches
// the reads of concurrent requests).
func (s *Store) APIKey(ctx context.Context, keyID string) (*mailroom.APIKey, error) {
	return s.keyReads.read(ctx, keyID)
}

// ListAPIKeys lists an account's keys, newest first.
func (s *Store) ListAPIKeys(ctx context.Context, accountID string, p mailroom.Page) ([]*mailroom.APIKey, string, error) {
	after, err := parseCursor(p.Cursor)
	if err != nil {
		return nil, "", err
	}
	limit := pageLimit(p)
	rows, err := s.read.QueryContext(ctx, `SELECT `+apiKeyColumns+` FROM api_keys
		WHERE account_id = $1 AND (created_at < $2 OR (created_at = $2 AND key_id < $3))
		ORDER BY created_at DESC, key_id DESC LIMIT $4`,
		accountID, after.at, after.id, limit+1)
	if err != nil {
		return nil, "", s.wrap(err, "list api keys")
	}
	out, err := collect(rows, scanAPIKey)
	if err != nil {
		return nil, "", s.wrap(err, "list api keys")
	}
	out, next := trimPage(out, limit, func(x *mailroom.APIKey) cursor { return cursor{at: micros(x.CreatedAt), id: x.KeyID} })
	return out, next, nil
}

// RevokeAPIKey marks a key of accountID revoked; an already revoked key
// keeps its time. The account is part of the one UPDATE, so a key of
// another account is never touched, not even between a check and a write.
// The audit entry (api_key.revoked) is written only when this call revoked
// the key: the row is locked and read first, so that of two concurrent
// revocations one records it.
func (s *Store) RevokeAPIKey(ctx context.Context, accountID, keyID string, at time.Time) (*mailroom.APIKey, error) {
	var k *mailroom.APIKey
	err := s.inTx(ctx, func(tx *sql.Tx) error {
		var was sql.NullInt64
		err := tx.QueryRowContext(ctx, `SELECT revoked_at FROM api_keys WHERE key_id = $1 AND account_id = $2`+s.dialect.Locks.Rows,
			keyID, accountID).Scan(&was)
		if errors.Is(err, sql.ErrNoRows) {
			return mailroom.Errorf(mailroom.ECodeNotFound, "No API key %q in this account.", keyID)
		}
		if err != nil {
			return s.wrap(err, "revoke api key")
		}
		k, err = scanAPIKey(tx.QueryRowContext(ctx,
			`UPDATE api_keys SET revoked_at = COALESCE(revoked_at, $2) WHERE key_id = $1 AND account_id = $3
			 RETURNING `+apiKeyColumns, keyID, micros(at), accountID))
		if err != nil || was.Valid {
			return s.wrap(err, "revoke api key")
		}
		return s.recordAudit(ctx, tx, accountID, mailroom.AuditAPIKeyRevoked,
			mailroom.AuditTarget{Type: mailroom.AuditTargetAPIKey, ID: keyID}, mailroom.APIKeyRevokedChanges(*k.RevokedAt))
	})
	if err != nil {
		return nil, err
	}
	return k, nil
}

// TouchAPIKeys records last uses in one transaction; an older time never
// replaces a newer one.
func (s *Store) TouchAPIKeys(ctx context.Context, lastUsed map[string]time.Time) error {
	return s.inTx(ctx, func(tx *sql.Tx) error {
		for id, t := range lastUsed {
			if _, err := tx.ExecContext(ctx, `UPDATE api_keys SET last_used_at = $2
				WHERE key_id = $1 AND (last_used_at IS NULL OR last_used_at < $2)`, id, micros(t)); err != nil {
				return s.wrap(err, "touch api keys")
			}
		}
		return nil
	})
}

func scanAPIKey(row scanner) (*mailroom.APIKey, error) {
	var k mailroom.APIKey
	var scopes string
	var created int64
	var lastUsed, revoked sql.NullInt64
	if err := row.Scan(&k.KeyID, &k.AccountID, &k.Name, &scopes, &k.SecretDigest, &created, &lastUsed, &revoked, &k.Domain); err != nil {
		return nil, err
	}
	for _, s := range strings.Split(scopes, ",") {
		if s != "" {
			k.Scopes = append(k.Scopes, mailroom.Scope(s))
		}
	}
	k.CreatedAt = fromMicros(created)
	k.LastUsedAt = fromNullMicros(lastUsed)
	k.RevokedAt = fromNullMicros(revoked)
	return &k, nil
}
