package main

import (
	"context"
	"fmt"
	"io"
)

// migrateCommand applies the migrations storage lacks. serve does the same
// on start; this command is for operators who migrate before a roll-out.
func migrateCommand(ctx context.Context, c *command, args []string, stdout, stderr io.Writer) error {
	fs, sf := c.storageFlagSet()
	rest, err := c.parse(fs, args, stdout)
	if err != nil {
		return err
	}
	if len(rest) > 0 {
		return usageError{fmt.Sprintf("migrate takes no arguments, got %q", rest)}
	}
	applied, err := sf.migrate(ctx)
	if err != nil {
		return err
	}
	switch len(applied) {
	case 0:
		fmt.Fprintf(stdout, "Storage is up to date, nothing to apply (%s).\n", sf.describe())
	case 1:
		fmt.Fprintf(stdout, "Applied migration %s (%s); storage is up to date.\n", versionRanges(applied), sf.describe())
	default:
		fmt.Fprintf(stdout, "Applied migrations %s (%s); storage is up to date.\n", versionRanges(applied), sf.describe())
	}
	return nil
}
