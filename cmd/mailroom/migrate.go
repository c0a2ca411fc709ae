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
	s, err := sf.open(ctx)
	if err != nil {
		return err
	}
	defer s.Close()
	fmt.Fprintf(stdout, "Storage is up to date (%s).\n", sf.describe())
	return nil
}
