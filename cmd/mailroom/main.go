// Command mailroom is the whole Mailroom service in one binary: `serve`
// runs the HTTPS API and its workers; the other commands manage accounts,
// keys and storage, and work while serve runs. This package only wires the
// other packages together.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/mailroom/mailroom"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	os.Exit(run(ctx, os.Args[1:], os.Stdout, os.Stderr))
}

// usageError is a mistake in the command line: exit status 2, with a
// pointer to the help of the command it was made in.
type usageError struct{ msg string }

func (e usageError) Error() string { return e.msg }

// isHelpWord: these ask for help in place of a command or subcommand.
func isHelpWord(s string) bool {
	switch s {
	case "help", "-h", "-help", "--help":
		return true
	}
	return false
}

// run runs the command line args and returns the exit status: 0, 1 for a
// failure, 2 for a mistake in the command line.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		printUsage(stderr)
		return 2
	}
	switch {
	case args[0] == "help" && len(args) > 1:
		// `mailroom help keys revoke` is `mailroom keys revoke --help`.
		return run(ctx, append(args[1:len(args):len(args)], "--help"), stdout, stderr)
	case isHelpWord(args[0]):
		printUsage(stdout)
		return 0
	case args[0] == "--version":
		args = append([]string{"version"}, args[1:]...)
	}
	c, rest, group := lookup(args)
	var err error
	hint := "mailroom"
	switch {
	case c != nil:
		hint += " " + c.name
		err = c.run(commandOrigin(ctx, c), c, rest, stdout, stderr)
	case group != "" && len(rest) > 0 && isHelpWord(rest[0]):
		printGroupUsage(stdout, group)
		return 0
	case group != "":
		hint += " " + group
		if len(rest) == 0 {
			err = usageError{fmt.Sprintf("%s needs a command: %s", group, subcommandNames(group))}
		} else {
			err = usageError{fmt.Sprintf("unknown command %q; %s has %s", group+" "+rest[0], group, subcommandNames(group))}
		}
	default:
		err = usageError{fmt.Sprintf("unknown command %q", args[0])}
	}
	var ue usageError
	var af failure
	switch {
	case err == nil, errors.Is(err, errHelpShown):
		return 0
	case errors.As(err, &ue):
		fmt.Fprintf(stderr, "mailroom: %v\nRun \"%s --help\" for usage.\n", err, hint)
		return 2
	case errors.As(err, &af):
		printFailure(stderr, hint, af.err)
		return 1
	default:
		fmt.Fprintf(stderr, "mailroom: %v\n", err)
		return 1
	}
}

// commandOrigin marks what an operator's command changes as the CLI's in
// the audit log (docs/api.md "Audit log"). serve is not one: the changes
// its background work makes are the system's, and its requests carry
// their keys.
func commandOrigin(ctx context.Context, c *command) context.Context {
	if c.name == "serve" {
		return ctx
	}
	return mailroom.WithAuditOrigin(ctx, mailroom.AuditOrigin{Actor: mailroom.AuditActor{Type: mailroom.AuditByCLI}})
}
