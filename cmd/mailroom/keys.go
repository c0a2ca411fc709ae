package main

import (
	"context"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/mailroom/mailroom"
	"github.com/mailroom/mailroom/apikey"
	"github.com/mailroom/mailroom/domain"
)

// keysCreate is `mailroom keys create --account NAME --scopes SCOPES
// [--domain NAME]`.
func keysCreate(ctx context.Context, c *command, args []string, stdout, stderr io.Writer) error {
	fs, sf := c.storageFlagSet()
	account := fs.String("account", "", "the `NAME` of the account the key belongs to (required)")
	scopes := fs.String("scopes", "", "comma-separated `SCOPES` of send, domains, templates, webhooks, receive, keys (required)")
	name := fs.String("name", "cli", "a `NAME` that says what the key is for")
	domainName := fs.String("domain", "", "restrict the key to sending from the account's domain of this `NAME` (or id); the key needs the send scope and not keys")
	rest, err := c.parse(fs, args, stdout)
	if err != nil {
		return err
	}
	if len(rest) != 0 {
		return usageError{fmt.Sprintf("keys create takes no arguments, got %q", rest)}
	}
	if *account == "" || *scopes == "" {
		return usageError{"keys create needs --account and --scopes"}
	}
	newKey := apikey.NewKey{Name: *name, Scopes: strings.Split(*scopes, ","), Domain: *domainName}
	// The flags are checked before storage is opened.
	if _, err := apikey.CheckNew(newKey, cliKeyFields); err != nil {
		return err
	}
	return withStore(ctx, *sf, func(s mailroom.Store) error {
		acct, err := s.AccountByName(ctx, *account)
		if err != nil {
			return err
		}
		keys := &apikey.Service{Store: s, Domains: &domain.Service{Store: s}}
		full, key, err := keys.Create(ctx, acct.ID, newKey, cliKeyFields)
		if err != nil {
			return err
		}
		restriction := ""
		if key.Domain != "" {
			restriction = ", sending from " + key.Domain + " only"
		}
		fmt.Fprintf(stdout, "Key %s created for %s with scopes %s%s. It is shown this once; keep it secret:\n%s\n",
			key.KeyID, acct.Name, key.Scopes, restriction, full)
		return nil
	})
}

// cliKeyFields names a key's fields in the problems `keys create`
// reports: its flags.
var cliKeyFields = apikey.Fields{Name: "--name", Scopes: "--scopes", Domain: "--domain"}

// keysList is `mailroom keys list --account NAME`.
func keysList(ctx context.Context, c *command, args []string, stdout, stderr io.Writer) error {
	fs, sf := c.storageFlagSet()
	account := fs.String("account", "", "the `NAME` of the account whose keys are listed (required)")
	rest, err := c.parse(fs, args, stdout)
	if err != nil {
		return err
	}
	if len(rest) != 0 {
		return usageError{fmt.Sprintf("keys list takes no arguments, got %q", rest)}
	}
	if *account == "" {
		return usageError{"keys list needs --account"}
	}
	return withStore(ctx, *sf, func(s mailroom.Store) error {
		acct, err := s.AccountByName(ctx, *account)
		if err != nil {
			return err
		}
		tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "KEY ID\tNAME\tSCOPES\tDOMAIN\tSTATUS\tCREATED\tLAST USED")
		page := mailroom.Page{Limit: mailroom.MaxPageLimit}
		for {
			keys, next, err := s.ListAPIKeys(ctx, acct.ID, page)
			if err != nil {
				return err
			}
			for _, k := range keys {
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", k.KeyID, k.Name, k.Scopes, keyDomain(k), k.Status(),
					k.CreatedAt.Format(time.RFC3339), optTime(k.LastUsedAt))
			}
			if next == "" {
				return tw.Flush()
			}
			page.Cursor = next
		}
	})
}

// keysRevoke is `mailroom keys revoke KEYID [--account NAME]`.
//
// Without --account it revokes whichever account's key KEYID is: the
// operator holds the database and so every account already, and a key id
// found in a leak or a log must be revocable at once, without first
// finding out whose it is. --account is the check an operator asks for
// when they know: the store revokes only that account's key, so a
// mistyped or pasted id of another account's key is refused and that key
// keeps working.
func keysRevoke(ctx context.Context, c *command, args []string, stdout, stderr io.Writer) error {
	fs, sf := c.storageFlagSet()
	account := fs.String("account", "", "revoke only if the key belongs to the account of this `NAME`")
	rest, err := c.parse(fs, args, stdout)
	if err != nil {
		return err
	}
	if len(rest) != 1 {
		return usageError{"keys revoke takes one argument, the KEYID"}
	}
	keyID := rest[0]
	if !mailroom.ValidKeyID(keyID) {
		return usageError{fmt.Sprintf("%q is not a key id (16 characters a-z, 0-9; the part after mailroom_)", keyID)}
	}
	return withStore(ctx, *sf, func(s mailroom.Store) error {
		var acct *mailroom.Account
		if *account != "" {
			if acct, err = s.AccountByName(ctx, *account); err != nil {
				return err
			}
		} else {
			k, err := s.APIKey(ctx, keyID)
			if mailroom.IsCode(err, mailroom.ECodeNotFound) {
				return fmt.Errorf("no key %s", keyID)
			} else if err != nil {
				return err
			}
			if acct, err = s.AccountByID(ctx, k.AccountID); err != nil {
				return err
			}
		}
		k, err := (&apikey.Service{Store: s}).Revoke(ctx, acct.ID, keyID)
		if mailroom.IsCode(err, mailroom.ECodeNotFound) {
			return fmt.Errorf("no key %s in account %s", keyID, acct.Name)
		} else if err != nil {
			return err
		}
		fmt.Fprintf(stdout, "Key %s of account %s revoked at %s.\n", k.KeyID, acct.Name, k.RevokedAt.Format(time.RFC3339))
		return nil
	})
}

// withStore runs fn on the store that exists (storageFlags.openExisting):
// a command about what is stored creates no store to find nothing in.
func withStore(ctx context.Context, sf storageFlags, fn func(mailroom.Store) error) error {
	s, err := sf.openExisting(ctx)
	if err != nil {
		return err
	}
	defer s.Close()
	return fn(s)
}

// withNewStore runs fn on the store, creating it when there is none
// (storageFlags.open): for accounts create, a first run's first step.
func withNewStore(ctx context.Context, sf storageFlags, fn func(mailroom.Store) error) error {
	s, err := sf.open(ctx)
	if err != nil {
		return err
	}
	defer s.Close()
	return fn(s)
}

// keyDomain is the one domain a key may send from, "any" for a key of
// the whole account.
func keyDomain(k *mailroom.APIKey) string {
	if k.Domain == "" {
		return "any"
	}
	return k.Domain
}

func optTime(t *time.Time) string {
	if t == nil {
		return "never"
	}
	return t.Format(time.RFC3339)
}
