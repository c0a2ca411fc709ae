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
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	os.Exit(run(ctx, os.Args[1:], os.Stdout, os.Stderr))
}

// usageError is a mistake in the command line: exit status 2.
type usageError struct{ msg string }

func (e usageError) Error() string { return e.msg }

const usage = `Mailroom, a self-hosted transactional email service.

Usage:
  mailroom serve [--dev] [flags]              run the service
  mailroom accounts create NAME               create an account and its first key
  mailroom accounts list                      list accounts with their request rates
  mailroom accounts update NAME [--rate R] [--burst B]
                                              set an account's request rate and burst
  mailroom keys create --account NAME --scopes send,domains [--name N]
  mailroom keys list --account NAME
  mailroom keys revoke KEYID
  mailroom migrate                            apply storage migrations
  mailroom version

Every flag has an environment twin: --data-dir is MAILROOM_DATA_DIR, and so on.
Run "mailroom COMMAND --help" for a command's flags.
`

func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return 2
	}
	var err error
	switch args[0] {
	case "serve":
		err = serveCommand(ctx, args[1:], stdout, stderr)
	case "accounts":
		err = accountsCommand(ctx, args[1:], stdout, stderr)
	case "keys":
		err = keysCommand(ctx, args[1:], stdout, stderr)
	case "migrate":
		err = migrateCommand(ctx, args[1:], stdout, stderr)
	case "version", "--version":
		fmt.Fprintln(stdout, versionString())
	case "help", "--help", "-h":
		fmt.Fprint(stdout, usage)
	default:
		err = usageError{fmt.Sprintf("unknown command %q", args[0])}
	}
	var ue usageError
	switch {
	case err == nil:
		return 0
	case errors.As(err, &ue):
		fmt.Fprintf(stderr, "mailroom: %v\n\n%s", err, usage)
		return 2
	case errors.Is(err, errHelpShown):
		return 0
	default:
		fmt.Fprintf(stderr, "mailroom: %v\n", err)
		return 1
	}
}
