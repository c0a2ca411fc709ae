package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"strconv"
	"text/tabwriter"
	"time"

	"github.com/mailroom/mailroom"
	"github.com/mailroom/mailroom/apikey"
)

// accountsCreate is `mailroom accounts create NAME`.
func accountsCreate(ctx context.Context, c *command, args []string, stdout, stderr io.Writer) error {
	fs, sf := c.storageFlagSet()
	rest, err := c.parse(fs, args, stdout)
	if err != nil {
		return err
	}
	if len(rest) != 1 {
		return usageError{"accounts create takes one argument, the account's NAME"}
	}
	if err := mailroom.ValidateAccountName(rest[0]); err != nil {
		return err
	}
	return withNewStore(ctx, *sf, func(s mailroom.Store) error {
		acct, key, err := createAccount(ctx, s, rest[0], time.Now())
		if err != nil {
			return err
		}
		fmt.Fprintf(stdout, "Account %s created: %s\n", acct.Name, acct.ID)
		fmt.Fprintf(stdout, "Its first API key holds every scope. It is shown this once; keep it secret:\n%s\n", key)
		return nil
	})
}

// accountsList is `mailroom accounts list`.
func accountsList(ctx context.Context, c *command, args []string, stdout, stderr io.Writer) error {
	fs, sf := c.storageFlagSet()
	rest, err := c.parse(fs, args, stdout)
	if err != nil {
		return err
	}
	if len(rest) != 0 {
		return usageError{fmt.Sprintf("accounts list takes no arguments, got %q", rest)}
	}
	return withStore(ctx, *sf, func(s mailroom.Store) error {
		accts, err := s.ListAccounts(ctx)
		if err != nil {
			return err
		}
		tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "ID\tNAME\tRATE\tBURST\tCREATED")
		for _, a := range accts {
			rate, burst := describeLimits(a)
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", a.ID, a.Name, rate, burst, a.CreatedAt.Format(time.RFC3339))
		}
		return tw.Flush()
	})
}

// accountsUpdate is `mailroom accounts update NAME [--rate R] [--burst B]`.
func accountsUpdate(ctx context.Context, c *command, args []string, stdout, stderr io.Writer) error {
	fs, sf := c.storageFlagSet()
	var rate float64
	var burst int
	fs.Float64Var(&rate, "rate", 0, fmt.Sprintf("requests per second, fractions allowed (accounts never set follow %g)", mailroom.DefaultRate))
	fs.IntVar(&burst, "burst", 0, fmt.Sprintf("requests at once (accounts never set follow %d)", mailroom.DefaultBurst))
	rest, err := c.parse(fs, args, stdout)
	if err != nil {
		return err
	}
	if len(rest) != 1 {
		return usageError{"accounts update takes one argument, the account's NAME"}
	}
	given := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { given[f.Name] = true })
	if !given["rate"] && !given["burst"] {
		return usageError{"accounts update needs --rate, --burst or both"}
	}
	return withStore(ctx, *sf, func(s mailroom.Store) error {
		acct, err := updateAccountLimits(ctx, s, rest[0], rate, given["rate"], burst, given["burst"])
		if err != nil {
			return err
		}
		r, b := describeLimits(acct)
		fmt.Fprintf(stdout, "Account %s (%s): rate %s requests/s, burst %s.\n", acct.Name, acct.ID, r, b)
		fmt.Fprintln(stdout, "Running nodes apply it within 10 s.")
		return nil
	})
}

// createAccount stores a new account and a first key with every scope, and
// returns the full key, which exists nowhere else.
func createAccount(ctx context.Context, s mailroom.Store, name string, now time.Time) (*mailroom.Account, string, error) {
	acct := &mailroom.Account{ID: mailroom.NewID(mailroom.PrefixAccount, now), Name: name, CreatedAt: now.UTC()}
	if err := s.CreateAccount(ctx, acct); err != nil {
		return nil, "", err
	}
	full, _, err := (&apikey.Service{Store: s, Now: func() time.Time { return now }}).CreateFull(ctx, acct.ID, "default")
	if err != nil {
		return nil, "", err
	}
	return acct, full, nil
}

// updateAccountLimits sets the limit parts the operator gave and keeps the
// others as they are in force, so that `--rate 50` alone does not reset
// the burst. The whole new limit is validated before it is stored.
func updateAccountLimits(ctx context.Context, s mailroom.AccountStore, name string, rate float64, setRate bool, burst int, setBurst bool) (*mailroom.Account, error) {
	acct, err := s.AccountByName(ctx, name)
	if err != nil {
		return nil, err
	}
	lim := acct.Limits()
	if setRate {
		lim.Rate = rate
	}
	if setBurst {
		lim.Burst = burst
	}
	if err := mailroom.ValidateRateLimit(lim.Rate, lim.Burst); err != nil {
		return nil, err
	}
	return s.UpdateAccountLimits(ctx, name, lim.Rate, lim.Burst)
}

// describeLimits shows the limits in force, marking the defaults, so the
// operator can tell an account that follows them from one set to 100/s.
func describeLimits(a *mailroom.Account) (rate, burst string) {
	lim := a.Limits()
	rate = strconv.FormatFloat(lim.Rate, 'f', -1, 64)
	burst = strconv.Itoa(lim.Burst)
	if a.RateLimit.Rate == 0 {
		rate += " (default)"
	}
	if a.RateLimit.Burst == 0 {
		burst += " (default)"
	}
	return rate, burst
}
