package main

import (
	"context"
	"regexp"
	"slices"
	"testing"
	"time"

	"github.com/mailroom/mailroom"
	"github.com/mailroom/mailroom/sqlite"
	"github.com/mailroom/mailroom/storetest"
)

// What an operator's commands change is in the audit log as the CLI's
// (docs/api.md "Audit log"), with no request id or address; a command
// that changes nothing records nothing.
func TestCLIChangesAreAuditedAsCLI(t *testing.T) {
	t.Chdir(t.TempDir())
	ctx := context.Background()
	code, out, errOut := runCLI("accounts", "create", "acme")
	if code != 0 {
		t.Fatalf("accounts create: %d %s", code, errOut)
	}
	firstKey := regexp.MustCompile(`mailroom_([0-9a-z]{16})_`).FindStringSubmatch(out)
	if firstKey == nil {
		t.Fatalf("accounts create printed no key: %s", out)
	}
	s, err := sqlite.OpenExisting(ctx, "mailroom-data")
	if err != nil {
		t.Fatal(err)
	}
	acct, err := s.AccountByName(ctx, "acme")
	if err != nil {
		t.Fatal(err)
	}
	// A domain from outside the CLI (a test's storage call): the
	// system's.
	if err := s.CreateDomain(ctx, storetest.NewDomain(acct, "shop.example", time.Now()), mailroom.DefaultMaxDomains); err != nil {
		t.Fatal(err)
	}
	s.Close()

	for _, args := range [][]string{
		{"accounts", "update", "acme", "--rate", "50"},
		{"accounts", "update", "acme", "--rate", "50"}, // the same again: nothing changes
		{"domains", "update", "shop.example", "--account", "acme", "--tls", "enforced"},
		{"keys", "revoke", firstKey[1], "--account", "acme"},
		{"keys", "revoke", firstKey[1], "--account", "acme"}, // revoked already
		{"keys", "list", "--account", "acme"},
	} {
		if code, _, errOut := runCLI(args...); code != 0 {
			t.Fatalf("%v: %d %s", args, code, errOut)
		}
	}

	s, err = sqlite.OpenExisting(ctx, "mailroom-data")
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	entries, _, err := s.ListAuditEntries(ctx, acct.ID, mailroom.AuditFilter{}, mailroom.Page{Limit: 100})
	if err != nil {
		t.Fatal(err)
	}
	slices.Reverse(entries)
	var got []string
	for _, e := range entries {
		got = append(got, string(e.Action)+" by "+string(e.Actor.Type))
		if e.RequestID != "" || e.IP != "" || e.Actor.KeyID != "" {
			t.Errorf("%s: a CLI or system entry with a request: %+v", e.Action, e)
		}
	}
	want := []string{"account.created by cli", "api_key.created by cli", "domain.created by system",
		"account.updated by cli", "domain.updated by cli", "api_key.revoked by cli"}
	if !slices.Equal(got, want) {
		t.Fatalf("audit log\n%q\nwant\n%q", got, want)
	}
}
