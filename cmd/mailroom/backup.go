package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/mailroom/mailroom/sealer"
	"github.com/mailroom/mailroom/sqlite"
)

// pgDumpRecipe points a PostgreSQL operator at the way to back up there.
const pgDumpRecipe = "on PostgreSQL, back up with pg_dump and restore with pg_restore, as docs/api.md \"Backups\" shows"

// backupCommand is `mailroom backup --out FILE`: a consistent copy of the
// SQLite store, taken while serve runs (docs/api.md "Backups").
func backupCommand(ctx context.Context, c *command, args []string, stdout, stderr io.Writer) error {
	fs, sf := c.storageFlagSet()
	var out string
	fs.StringVar(&out, "out", "", "the `FILE` the copy is written to (replaced if there, only once the copy is whole)")
	rest, err := c.parse(fs, args, stdout)
	if err != nil {
		return err
	}
	if len(rest) > 0 {
		return usageError{fmt.Sprintf("backup takes no arguments, got %q", rest)}
	}
	if out == "" {
		return usageError{"backup needs --out FILE"}
	}
	if sf.databaseURL != "" {
		return fmt.Errorf("backup copies a SQLite store; %s", pgDumpRecipe)
	}
	start := time.Now()
	size, err := sqlite.Backup(ctx, sf.dataDir, out)
	if errors.Is(err, sqlite.ErrNoStore) {
		return fmt.Errorf("no store at %s (no %s there): give the --data-dir that serve uses", sf.dataDir, sqlite.FileName)
	} else if err != nil {
		return fmt.Errorf("backup: %w", err)
	}
	fmt.Fprintf(stdout, "Backed up %s to %s (%s, in %s).\n", sf.describe(), out, byteSize(size), time.Since(start).Round(time.Millisecond))
	keyFile := filepath.Join(sf.dataDir, sealer.KeyFileName)
	if _, err := os.Stat(keyFile); err == nil {
		fmt.Fprintf(stdout, "The secret key is not in it: keep %s (or your --secret-key) apart from the backup; restore needs it.\n", keyFile)
	} else {
		fmt.Fprintln(stdout, "The secret key is not in it: keep the store's --secret-key apart from the backup; restore needs it.")
	}
	return nil
}

// byteSize writes n bytes for a person: 1.5 MB.
func byteSize(n int64) string {
	switch {
	case n >= 1<<30:
		return fmt.Sprintf("%.1f GB", float64(n)/(1<<30))
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f kB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d bytes", n)
}
