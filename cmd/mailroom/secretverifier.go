package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"

	"github.com/mailroom/mailroom/sealer"
	"github.com/mailroom/mailroom/sqlstore"
)

// checkSecretKey holds the node's secret key against the store's verifier
// of it (docs/api.md "One secret key per store"), writing the verifier when
// the store has none yet (a new store, or one from before). A node whose
// key differs is refused before it claims mail: it could open none of the
// DKIM keys and webhook secrets the store holds, and would defer every
// message it took until its retry window ended.
//
// On a store from before the verifier, the key must open the DKIM keys the
// store holds before it becomes the store's (sqlstore.EnsureSecretVerifier).
//
// createdKey says the key was made by this start, in the data directory:
// on a store that already has a key, that file is removed again, so that
// the operator puts the store's key back rather than finds a wrong one.
func checkSecretKey(ctx context.Context, store *sqlstore.Store, seal *sealer.Sealer, sf storageFlags, createdKey bool, log *slog.Logger) error {
	opens := func(sealed, associatedData []byte) bool {
		_, err := seal.Open(sealed, associatedData)
		return err == nil
	}
	stored, written, err := store.EnsureSecretVerifier(ctx, seal.Verifier(), opens)
	if errors.Is(err, sqlstore.ErrSealedUnderAnotherKey) {
		return secretKeyMismatch(sf, createdKey)
	} else if err != nil {
		return fmt.Errorf("secret key: %w", err)
	}
	if written {
		log.Info("the store now keeps a verifier of this node's secret key; every node of it must be given the same key", "storage", sf.describe())
		return nil
	}
	if seal.Verifies(stored) {
		return nil
	}
	return secretKeyMismatch(sf, createdKey)
}

// secretKeyMismatch is the refusal of a key the store's verifier does not
// match, saying where this node's key came from and what to do.
func secretKeyMismatch(sf storageFlags, createdKey bool) error {
	keyFile := filepath.Join(sf.dataDir, sealer.KeyFileName)
	if createdKey {
		os.Remove(keyFile)
	}
	if sf.databaseURL != "" && createdKey {
		return fmt.Errorf("secret key: this node was given no secret key, and the one it made now in %s is not the one this PostgreSQL store was started with: "+
			"every node of a store needs the same secret key (DKIM keys and webhook secrets are sealed under it); "+
			"give this node the key the other nodes use (--secret-key, --secret-key-file or MAILROOM_SECRET_KEY)", keyFile)
	}
	if sf.databaseURL != "" {
		return fmt.Errorf("secret key: this node's secret key is not the one this PostgreSQL store was started with: " +
			"every node of a store needs the same secret key (DKIM keys and webhook secrets are sealed under it); " +
			"give this node the key the other nodes use (--secret-key, --secret-key-file or MAILROOM_SECRET_KEY)")
	}
	if createdKey {
		return fmt.Errorf("secret key: %s holds a store but no %s, and the key made now is not the store's: "+
			"put back the %s this store was started with (the one kept apart from its backups), or give it with --secret-key; "+
			"a store needs the same secret key for as long as it lives (DKIM keys and webhook secrets are sealed under it)",
			sf.dataDir, sealer.KeyFileName, sealer.KeyFileName)
	}
	return fmt.Errorf("secret key: the key given (--secret-key, or %s) is not the one this store was started with: "+
		"a store needs the same secret key for as long as it lives (DKIM keys and webhook secrets are sealed under it); "+
		"give the store's key (the one kept apart from its backups)", keyFile)
}
