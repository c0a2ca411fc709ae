package main

import (
	"context"
	"fmt"
	"io"
	"text/tabwriter"
	"time"

	"github.com/mailroom/mailroom"
)

func accountsCommand(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		return usageError{"accounts needs a subcommand: create or list"}
	}
	fs := newFlagSet("accounts "+args[0], stderr)
	var sf storageFlags
	sf.register(fs)
	rest, err := parseFlags(fs, args[1:])
	if err != nil {
		return err
	}
	switch args[0] {
	case "create":
		if len(rest) != 1 {
			return usageError{"usage: mailroom accounts create NAME"}
		}
		if err := mailroom.ValidateAccountName(rest[0]); err != nil {
			return err
		}
		return withStore(ctx, sf, func(s mailroom.Store) error {
			acct, key, err := createAccount(ctx, s, rest[0], time.Now())
			if err != nil {
				return err
			}
			fmt.Fprintf(stdout, "Account %s created: %s\n", acct.Name, acct.ID)
			fmt.Fprintf(stdout, "Its first API key holds every scope. It is shown this once; keep it secret:\n%s\n", key)
			return nil
		})
	case "list":
		if len(rest) != 0 {
			return usageError{"usage: mailroom accounts list"}
		}
		return withStore(ctx, sf, func(s mailroom.Store) error {
			accts, err := s.ListAccounts(ctx)
			if err != nil {
				return err
			}
			tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "ID\tNAME\tCREATED")
			for _, a := range accts {
				fmt.Fprintf(tw, "%s\t%s\t%s\n", a.ID, a.Name, a.CreatedAt.Format(time.RFC3339))
			}
			return tw.Flush()
		})
	}
	return usageError{fmt.Sprintf("unknown subcommand accounts %s", args[0])}
}

// createAccount stores a new account and a first key with every scope, and
// returns the full key, which exists nowhere else.
func createAccount(ctx context.Context, s mailroom.Store, name string, now time.Time) (*mailroom.Account, string, error) {
	acct := &mailroom.Account{ID: mailroom.NewID(mailroom.PrefixAccount, now), Name: name, CreatedAt: now.UTC()}
	if err := s.CreateAccount(ctx, acct); err != nil {
		return nil, "", err
	}
	full, key := mailroom.NewAPIKey(acct.ID, "default", mailroom.Scopes(mailroom.AllScopes), now)
	if err := s.CreateAPIKey(ctx, key); err != nil {
		return nil, "", err
	}
	return acct, full, nil
}
