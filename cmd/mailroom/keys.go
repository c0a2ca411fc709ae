package main

import (
	"context"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/mailroom/mailroom"
)

func keysCommand(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		return usageError{"keys needs a subcommand: create, list or revoke"}
	}
	fs := newFlagSet("keys "+args[0], stderr)
	var sf storageFlags
	sf.register(fs)
	account := fs.String("account", "", "the account's name")
	scopes := fs.String("scopes", "", "comma-separated scopes: send, domains, templates, webhooks, keys")
	name := fs.String("name", "cli", "a name that says what the key is for")
	rest, err := parseFlags(fs, args[1:])
	if err != nil {
		return err
	}
	switch args[0] {
	case "create":
		if *account == "" || *scopes == "" || len(rest) != 0 {
			return usageError{"usage: mailroom keys create --account NAME --scopes send,domains [--name N]"}
		}
		var v mailroom.Validator
		mailroom.ValidateKeyName(&v, "--name", *name)
		ss := mailroom.ParseScopes(&v, "--scopes", strings.Split(*scopes, ","))
		if err := v.Err(); err != nil {
			return err
		}
		return withStore(ctx, sf, func(s mailroom.Store) error {
			acct, err := s.AccountByName(ctx, *account)
			if err != nil {
				return err
			}
			full, key := mailroom.NewAPIKey(acct.ID, *name, ss, time.Now())
			if err := s.CreateAPIKey(ctx, key); err != nil {
				return err
			}
			fmt.Fprintf(stdout, "Key %s created for %s with scopes %s. It is shown this once; keep it secret:\n%s\n",
				key.KeyID, acct.Name, key.Scopes, full)
			return nil
		})
	case "list":
		if *account == "" || len(rest) != 0 {
			return usageError{"usage: mailroom keys list --account NAME"}
		}
		return withStore(ctx, sf, func(s mailroom.Store) error {
			acct, err := s.AccountByName(ctx, *account)
			if err != nil {
				return err
			}
			tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "KEY ID\tNAME\tSCOPES\tSTATUS\tCREATED\tLAST USED")
			page := mailroom.Page{Limit: mailroom.MaxPageLimit}
			for {
				keys, next, err := s.ListAPIKeys(ctx, acct.ID, page)
				if err != nil {
					return err
				}
				for _, k := range keys {
					fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", k.KeyID, k.Name, k.Scopes, k.Status(),
						k.CreatedAt.Format(time.RFC3339), optTime(k.LastUsedAt))
				}
				if next == "" {
					return tw.Flush()
				}
				page.Cursor = next
			}
		})
	case "revoke":
		if len(rest) != 1 {
			return usageError{"usage: mailroom keys revoke KEYID"}
		}
		if !mailroom.ValidKeyID(rest[0]) {
			return fmt.Errorf("%q is not a key id (16 characters a-z, 0-9; the part after mailroom_)", rest[0])
		}
		return withStore(ctx, sf, func(s mailroom.Store) error {
			k, err := s.RevokeAPIKey(ctx, rest[0], time.Now())
			if err != nil {
				return err
			}
			fmt.Fprintf(stdout, "Key %s revoked at %s.\n", k.KeyID, k.RevokedAt.Format(time.RFC3339))
			return nil
		})
	}
	return usageError{fmt.Sprintf("unknown subcommand keys %s", args[0])}
}

func withStore(ctx context.Context, sf storageFlags, fn func(mailroom.Store) error) error {
	s, err := sf.open(ctx)
	if err != nil {
		return err
	}
	defer s.Close()
	return fn(s)
}

func optTime(t *time.Time) string {
	if t == nil {
		return "never"
	}
	return t.Format(time.RFC3339)
}
