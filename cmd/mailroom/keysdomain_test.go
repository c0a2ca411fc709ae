package main

import (
	"context"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/mailroom/mailroom"
	"github.com/mailroom/mailroom/sqlite"
	"github.com/mailroom/mailroom/storetest"
)

// `keys create --domain` makes a key that sends from that one domain,
// named by its name or its id; `keys list` shows each key's domain; a
// domain the account lacks, or a key that could not send or could make
// keys, is refused.
func TestKeysCreateRestrictedToADomain(t *testing.T) {
	t.Chdir(t.TempDir())
	if code, _, errOut := runCLI("accounts", "create", "acme"); code != 0 {
		t.Fatalf("accounts create: %d %s", code, errOut)
	}
	ctx := context.Background()
	s, err := sqlite.OpenExisting(ctx, "mailroom-data")
	if err != nil {
		t.Fatal(err)
	}
	acct, err := s.AccountByName(ctx, "acme")
	if err != nil {
		t.Fatal(err)
	}
	d := storetest.NewDomain(acct, "shop.example", time.Now())
	if err := s.CreateDomain(ctx, d, mailroom.DefaultMaxDomains); err != nil {
		t.Fatal(err)
	}
	s.Close()

	for _, name := range []string{"Shop.Example", d.ID} {
		code, out, errOut := runCLI("keys", "create", "--account", "acme", "--scopes", "send", "--name", "shop", "--domain", name)
		if code != 0 || !strings.Contains(out, "sending from shop.example only") {
			t.Fatalf("keys create --domain %s: exit %d\n%s%s", name, code, out, errOut)
		}
	}
	for _, c := range []struct{ scopes, domain, says string }{
		{"send", "other.example", `--domain: names no domain of this account ("other.example")`},
		{"domains", "shop.example", "--domain: restricts what the key sends, and the key has no \"send\" scope"},
		{"send,keys", "shop.example", "--domain: cannot restrict a key with the \"keys\" scope"},
		{"send,receive", "shop.example", "--domain: cannot restrict a key with the \"receive\" scope"},
	} {
		code, out, errOut := runCLI("keys", "create", "--account", "acme", "--scopes", c.scopes, "--domain", c.domain)
		if code != 1 || out != "" || !strings.Contains(errOut, c.says) {
			t.Errorf("--scopes %s --domain %s: exit %d, stdout %q, stderr:\n%s", c.scopes, c.domain, code, out, errOut)
		}
	}
	code, out, errOut := runCLI("keys", "list", "--account", "acme")
	if code != 0 {
		t.Fatalf("keys list: %d %s", code, errOut)
	}
	for _, want := range []string{`(?m)^KEY ID\s+NAME\s+SCOPES\s+DOMAIN\s+STATUS`, `(?m)^[a-z0-9]{16}\s+shop\s+send\s+shop\.example\s+active`,
		`(?m)^[a-z0-9]{16}\s+default\s+\S+\s+any\s+active`} {
		if !regexp.MustCompile(want).MatchString(out) {
			t.Errorf("keys list lacks %s:\n%s", want, out)
		}
	}
	if n := strings.Count(out, "shop.example"); n != 2 {
		t.Errorf("keys list shows %d restricted keys, want 2:\n%s", n, out)
	}
}
