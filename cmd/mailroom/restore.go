package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"

	"github.com/mailroom/mailroom/sealer"
	"github.com/mailroom/mailroom/sqlite"
)

// restoreCommand is `mailroom restore --from FILE --data-dir DIR`: the
// store of a backup put back in a data directory no node runs on, once the
// secret key it will be served with is known to be the store's
// (docs/api.md "Backups").
func restoreCommand(ctx context.Context, c *command, args []string, stdout, stderr io.Writer) error {
	fs, sf := c.storageFlagSet()
	var from, secretKey string
	fs.StringVar(&from, "from", "", "the backup `FILE`, as backup wrote it")
	secretFlag(fs, &secretKey, "secret-key", "`BASE64` of the store's secret key, when serve is given it this way; else the data directory's secret.key is the key")
	rest, err := c.parse(fs, args, stdout)
	if err != nil {
		return err
	}
	if len(rest) > 0 {
		return usageError{fmt.Sprintf("restore takes no arguments, got %q", rest)}
	}
	if from == "" {
		return usageError{"restore needs --from FILE"}
	}
	if sf.databaseURL != "" {
		return fmt.Errorf("restore puts back a SQLite store; %s", pgDumpRecipe)
	}
	seal, err := sealer.Load(sf.dataDir, secretKey)
	if errors.Is(err, sealer.ErrNoKey) {
		return fmt.Errorf("restore: %w: copy the store's secret key (kept apart from its backups) to %s, or give it with --secret-key",
			err, filepath.Join(sf.dataDir, sealer.KeyFileName))
	} else if err != nil {
		return fmt.Errorf("restore: %w", err)
	}
	checkKey := func(verifier []byte) error {
		if verifier == nil || seal.Verifies(verifier) {
			return nil
		}
		return fmt.Errorf("the secret key (%s) is not the one the backed-up store was started with, "+
			"and could open none of its DKIM keys and webhook secrets: give the store's key", keySource(sf.dataDir, secretKey))
	}
	r, err := sqlite.Restore(ctx, from, sf.dataDir, checkKey)
	if errors.Is(err, sqlite.ErrDataDirInUse) {
		return fmt.Errorf("restore: %w: stop it first; restore never replaces a store a node is serving", err)
	} else if err != nil {
		return fmt.Errorf("restore: %w", err)
	}
	fmt.Fprintf(stdout, "Restored %s into %s.\n", from, sf.describe())
	if len(r.Applied) > 0 {
		fmt.Fprintf(stdout, "The backup was older than this Mailroom: applied migrations %s.\n", versionRanges(r.Applied))
	}
	if r.Verified {
		fmt.Fprintf(stdout, "The secret key (%s) is the store's.\n", keySource(sf.dataDir, secretKey))
	} else {
		fmt.Fprintf(stdout, "The backup holds no verifier of the secret key (taken before a Mailroom of this version served the store), so the key could not be checked;\n"+
			"serve takes the key it is given (%s) for the store's at its first start.\n", keySource(sf.dataDir, secretKey))
	}
	if r.MovedAside != "" {
		fmt.Fprintf(stdout, "The store that was there is kept as %s.\n", r.MovedAside)
	}
	start := "mailroom serve --data-dir " + sf.dataDir
	if secretKey != "" {
		start += " with the same --secret-key"
	}
	fmt.Fprintf(stdout, "Start it with %s: mail that was queued is delivered.\n", start)
	return nil
}

// keySource names where the secret key came from, never the key.
func keySource(dataDir, flagValue string) string {
	if flagValue != "" {
		return "--secret-key"
	}
	return filepath.Join(dataDir, sealer.KeyFileName)
}
