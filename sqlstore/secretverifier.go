package sqlstore

import (
	"context"
	"database/sql"
	"errors"
)

// MigrationLock takes the lock under which the store's migrations are
// applied (a file lock beside the SQLite file, PostgreSQL's advisory lock
// that goose takes) and returns its release. The engine that opened the
// store sets it with SetMigrationLock.
type MigrationLock func(ctx context.Context) (unlock func(), err error)

// SetMigrationLock gives the store its engine's migration lock, which
// EnsureSecretVerifier takes.
func (s *Store) SetMigrationLock(lock MigrationLock) { s.migrationLock = lock }

// ErrSealedUnderAnotherKey is EnsureSecretVerifier's refusal to write the
// verifier of a key that cannot open what the store already holds sealed.
var ErrSealedUnderAnotherKey = errors.New("the store's secrets are sealed under another secret key")

// EnsureSecretVerifier stores v as the store's verifier of the secret key
// when it holds none (a new store, or one from before migration 00024),
// and returns the verifier the store holds afterwards: v itself if written
// is true, else the one found, which the caller compares with its own
// (sealer.Verifies) before it touches sealed data.
//
// A store from before may already hold secrets sealed under some key: then
// v is written only if opens (the caller's sealer) opens one of them, the
// newest domain's DKIM key (sealed with the domain's id as associated
// data), and ErrSealedUnderAnotherKey is returned otherwise. Of two nodes
// of such a store that were started with different keys, the first to
// start after the upgrade must not make its wrong key the store's.
//
// It runs under the migration lock, after the migrations (docs/api.md
// "One secret key per store"), and writes only if no row is there: of two
// nodes starting at once on a new store with different keys, one writes
// its verifier and the other reads it back and refuses to start; they can
// never both go on, each believing its own key is the store's.
func (s *Store) EnsureSecretVerifier(ctx context.Context, v []byte, opens func(sealed, associatedData []byte) bool) (stored []byte, written bool, err error) {
	if s.migrationLock != nil {
		unlock, err := s.migrationLock(ctx)
		if err != nil {
			return nil, false, s.wrap(err, "take the migration lock")
		}
		defer unlock()
	}
	err = s.inTx(ctx, func(tx *sql.Tx) error {
		err := tx.QueryRowContext(ctx, `SELECT verifier FROM secret_verifier WHERE id = 1`).Scan(&stored)
		if err == nil {
			return nil
		} else if !errors.Is(err, sql.ErrNoRows) {
			return s.wrap(err, "read the secret-key verifier")
		}
		var domainID string
		var sealed []byte
		err = tx.QueryRowContext(ctx, `SELECT id, dkim_private_key FROM domains ORDER BY created_at DESC, id DESC LIMIT 1`).Scan(&domainID, &sealed)
		switch {
		case errors.Is(err, sql.ErrNoRows): // nothing sealed yet
		case err != nil:
			return s.wrap(err, "read a sealed DKIM key")
		case opens != nil && !opens(sealed, []byte(domainID)):
			return ErrSealedUnderAnotherKey
		}
		// ON CONFLICT DO NOTHING as well as the lock: a store opened by
		// hand, without its engine's lock, still gets one verifier only.
		res, err := tx.ExecContext(ctx, `INSERT INTO secret_verifier (id, verifier, created_at)
			VALUES (1, $1, `+s.dialect.SQL.NowMicros+`) ON CONFLICT (id) DO NOTHING`, v)
		if err != nil {
			return s.wrap(err, "write the secret-key verifier")
		}
		n, _ := res.RowsAffected()
		written = n == 1
		return s.wrap(tx.QueryRowContext(ctx, `SELECT verifier FROM secret_verifier WHERE id = 1`).Scan(&stored), "read the secret-key verifier")
	})
	return stored, written, err
}

// SecretVerifier returns the store's verifier of the secret key, or nil
// when none was written yet (no node of this version has started on it).
func (s *Store) SecretVerifier(ctx context.Context) ([]byte, error) {
	var v []byte
	err := s.read.QueryRowContext(ctx, `SELECT verifier FROM secret_verifier WHERE id = 1`).Scan(&v)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	}
	return v, s.wrap(err, "read the secret-key verifier")
}
