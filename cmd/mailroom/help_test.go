package main

import (
	"bytes"
	"context"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// runCLI runs a command line as main does and returns its exit status and
// output.
func runCLI(args ...string) (code int, stdout, stderr string) {
	var out, errOut bytes.Buffer
	code = run(context.Background(), args, &out, &errOut)
	return code, out.String(), errOut.String()
}

// flagLine is a flag in help: "  --name" at the start of a line.
var flagLine = regexp.MustCompile(`(?m)^  (-{1,2})([a-z][a-z-]*)\b`)

// helpFlags lists the flags a help text shows, failing on any written
// -flag rather than --flag.
func helpFlags(t *testing.T, help string) []string {
	t.Helper()
	var names []string
	for _, m := range flagLine.FindAllStringSubmatch(help, -1) {
		if m[1] != "--" {
			t.Errorf("help writes %s%s, not --%s", m[1], m[2], m[2])
		}
		names = append(names, m[2])
	}
	slices.Sort(names)
	return names
}

var storage = []string{"data-dir", "database-url", "database-url-file"}

// apiFlagNames are the flags of every command that calls the API.
var apiFlagNames = []string{"cacert", "data-dir", "key", "retries", "url"}

// Every command and group answers --help, -h and `mailroom help …` with
// exit 0, its usage on stdout, its arguments, and exactly the flags it
// reads: a flag listed but ignored would be a lie to the operator.
func TestEveryCommandHasHelp(t *testing.T) {
	serveFlags := []string{"data-dir", "database-url", "delivery", "delivery-lease", "delivery-workers", "dev",
		"dev-listen-anywhere", "dns-server", "hostname", "listen", "log-format", "max-connections", "max-connections-per-address", "max-templates", "metrics-listen", "mx-host", "relay-url", "retention",
		"retry-min-delay", "retry-window", "return-path-label", "secret-key", "sending-ips", "smtp-port",
		"spf-mechanisms", "tls-cert", "tls-key", "max-webhooks", "webhook-concurrency", "webhooks-allow-private", "inbound-listen", "receive-max-size", "public-url", "submission-listen", "submissions-listen"}
	serveFlags = append(serveFlags, "database-url-file", "relay-url-file", "secret-key-file")
	// What one account may make (issue 27).
	serveFlags = append(serveFlags, "max-domains", "max-template-versions")
	serveFlags = append(serveFlags, "request-memory")
	// The audit log's retention (issue 31).
	serveFlags = append(serveFlags, "audit-retention")
	// How mail leaves (issue 28).
	serveFlags = append(serveFlags, "delivery-policy", "greylist-retry", "ip-pool")
	// TLS reporting (issue 29).
	serveFlags = append(serveFlags, "tls-rpt-from", "tls-rpt-interval")
	// Domain health (issue 31).
	serveFlags = append(serveFlags, "dnsbl")
	cases := []struct {
		command string
		args    []string // the arguments the usage names
		flags   []string
	}{
		{"serve", nil, serveFlags},
		{"accounts create", []string{"NAME"}, storage},
		{"accounts list", nil, storage},
		{"accounts update", []string{"NAME"}, append([]string{"burst", "rate"}, storage...)},
		{"keys create", nil, append([]string{"account", "domain", "name", "scopes"}, storage...)},
		{"keys list", nil, append([]string{"account"}, storage...)},
		{"keys revoke", []string{"KEYID"}, append([]string{"account"}, storage...)},
		{"domains update", []string{"DOMAIN"}, append([]string{"account", "ip-pool", "tls", "open-tracking", "click-tracking"}, storage...)},
		{"send", nil, append([]string{"attach", "bcc", "category", "cc", "from", "html", "html-file", "idempotency-key", "json",
			"reply-to", "subject", "tag", "template", "text", "text-file", "to", "var", "vars-file"}, apiFlagNames...)},
		{"messages list", nil, append([]string{"all", "category", "cursor", "event", "from", "json", "limit", "since", "status", "tag",
			"template", "to", "until"}, apiFlagNames...)},
		{"messages get", []string{"ID"}, append([]string{"json"}, apiFlagNames...)},
		{"messages raw", []string{"ID"}, apiFlagNames},
		{"sites", nil, []string{"json", "metrics-url"}},
		{"migrate", nil, storage},
		{"backup", nil, append([]string{"out"}, storage...)},
		{"restore", nil, append([]string{"from", "secret-key", "secret-key-file"}, storage...)},
		{"version", nil, nil},
	}
	tested := map[string]bool{}
	for _, tc := range cases {
		tested[tc.command] = true
		words := strings.Fields(tc.command)
		forms := [][]string{
			append(slices.Clone(words), "--help"),
			append(slices.Clone(words), "-h"),
			append([]string{"help"}, words...),
			// Help wins wherever it stands, even after a half-typed line.
			append(slices.Clone(words), "x", "--help"),
		}
		for _, args := range forms {
			code, out, errOut := runCLI(args...)
			if code != 0 || errOut != "" {
				t.Errorf("mailroom %s: exit %d, stderr %q", strings.Join(args, " "), code, errOut)
				continue
			}
			if !strings.HasPrefix(out, "Usage: mailroom "+tc.command) {
				t.Errorf("mailroom %s printed:\n%s", strings.Join(args, " "), out)
			}
			for _, a := range tc.args {
				if !regexp.MustCompile(`(?m)^Usage: mailroom `+tc.command+` .*\b`+a+`\b`).MatchString(out) ||
					!regexp.MustCompile(`(?m)^  `+a+`$`).MatchString(out) {
					t.Errorf("mailroom %s does not show the argument %s:\n%s", strings.Join(args, " "), a, out)
				}
			}
			want := slices.Sorted(slices.Values(tc.flags))
			if got := helpFlags(t, out); !slices.Equal(got, want) {
				t.Errorf("mailroom %s lists the flags\n  %v\nwant\n  %v", strings.Join(args, " "), got, want)
			}
		}
	}
	for _, c := range commands {
		if !tested[c.name] {
			t.Errorf("the help of %q is not tested", c.name)
		}
	}

	// The top level and the groups list their commands.
	for _, args := range [][]string{{"--help"}, {"-h"}, {"help"}, {"accounts", "--help"}, {"accounts", "-h"},
		{"help", "accounts"}, {"keys", "--help"}, {"keys", "help"}, {"help", "keys"}, {"messages", "--help"}, {"help", "messages"}, {"domains", "--help"}, {"help", "domains"}} {
		code, out, errOut := runCLI(args...)
		if code != 0 || errOut != "" || !strings.Contains(out, "Usage:") {
			t.Errorf("mailroom %s: exit %d, stderr %q, stdout:\n%s", strings.Join(args, " "), code, errOut, out)
		}
		group := ""
		for _, g := range []string{"accounts", "keys", "messages", "domains"} {
			if slices.Contains(args, g) {
				group = g
			}
		}
		for _, c := range commands {
			if group != "" && !strings.HasPrefix(c.name, group+" ") {
				continue // a group lists only its own
			}
			if !strings.Contains(out, "mailroom "+c.name) {
				t.Errorf("mailroom %s does not list %q:\n%s", strings.Join(args, " "), c.name, out)
			}
		}
		if m := regexp.MustCompile(`(^|\s)-[a-z]`).FindString(out); m != "" {
			t.Errorf("mailroom %s writes a flag with one dash (%q):\n%s", strings.Join(args, " "), m, out)
		}
	}
}

// A mistake in the command line exits 2 with a short message that points
// at the help of the command it was made in, and nothing on stdout.
func TestCommandLineMistakes(t *testing.T) {
	t.Chdir(t.TempDir()) // a command that ran anyway writes its ./mailroom-data here
	t.Setenv("MAILROOM_API_KEY", "")
	cases := []struct {
		args []string
		want string // in the message
		help string // the help it points at
	}{
		{nil, "Usage:", ""},
		{[]string{"frobnicate"}, `unknown command "frobnicate"`, "mailroom --help"},
		{[]string{"accounts"}, "create, list or update", "mailroom accounts --help"},
		{[]string{"keys", "rotate"}, `unknown command "keys rotate"`, "mailroom keys --help"},
		{[]string{"keys", "revoke"}, "KEYID", "mailroom keys revoke --help"},
		{[]string{"keys", "revoke", "not-a-key-id"}, "not a key id", "mailroom keys revoke --help"},
		{[]string{"keys", "revoke", "--scopes", "send", "abcdefghijklmnop"}, "unknown flag --scopes", "mailroom keys revoke --help"},
		{[]string{"keys", "create", "--scopes", "send"}, "needs --account and --scopes", "mailroom keys create --help"},
		{[]string{"keys", "list"}, "needs --account", "mailroom keys list --help"},
		{[]string{"accounts", "create", "--rate", "5", "acme"}, "unknown flag --rate", "mailroom accounts create --help"},
		{[]string{"accounts", "update", "acme", "--rate", "fast"}, `invalid value "fast" for flag --rate`, "mailroom accounts update --help"},
		{[]string{"accounts", "update", "acme"}, "--rate, --burst or both", "mailroom accounts update --help"},
		{[]string{"migrate", "now"}, "no arguments", "mailroom migrate --help"},
		{[]string{"version", "--short"}, "unknown flag --short", "mailroom version --help"},
		{[]string{"serve", "--listen"}, "flag needs an argument: --listen", "mailroom serve --help"},
		{[]string{"serve", "--tls-cert", "c.pem"}, "--tls-cert and --tls-key go together", "mailroom serve --help"},
		{[]string{"serve", "--request-memory", "64MiB"}, "at least 256MiB", "mailroom serve --help"},
		{[]string{"serve", "--request-memory", "lots"}, "not a size", "mailroom serve --help"},
		{[]string{"messages"}, "list, get or raw", "mailroom messages --help"},
		{[]string{"domains"}, "needs a command: update", "mailroom domains --help"},
		{[]string{"domains", "update"}, "the DOMAIN", "mailroom domains update --help"},
		{[]string{"domains", "update", "shop.example", "--ip-pool", "bulk"}, "needs --account and a setting", "mailroom domains update --help"},
		{[]string{"domains", "update", "shop.example", "--account", "acme"}, "needs --account and a setting", "mailroom domains update --help"},
		{[]string{"domains", "update", "shop.example", "--account", "acme", "--tls", "strict"}, `--tls "strict": want opportunistic or enforced`, "mailroom domains update --help"},
		{[]string{"domains", "update", "shop.example", "--account", "acme", "--open-tracking", "yes"}, `--open-tracking "yes": want on or off`, "mailroom domains update --help"},
		{[]string{"domains", "update", "shop.example", "--account", "acme", "--ip-pool", "bulk pool"}, `--ip-pool "bulk pool" is not a pool name`, "mailroom domains update --help"},
		{[]string{"send", "--from", "a@shop.example", "--subject", "Hi", "--text", "t"}, "needs --to", "mailroom send --help"},
		{[]string{"send", "--to", "b@example.net", "--subject", "Hi", "--text", "t"}, "needs --from", "mailroom send --help"},
		{[]string{"send", "--from", "a@shop.example", "--to", "b@example.net", "--text", "t"}, "needs --subject", "mailroom send --help"},
		{[]string{"send", "--from", "a@shop.example", "--to", "b@example.net", "--subject", "Hi"}, "needs a body", "mailroom send --help"},
		{[]string{"send", "--to", "b@example.net", "--text", "t", "--template", "receipt"}, "--template gives the body", "mailroom send --help"},
		{[]string{"send", "--to", "b@example.net", "--text", "t", "--text-file", "t.txt", "--from", "a@shop.example", "--subject", "Hi"}, "give the body once", "mailroom send --help"},
		{[]string{"send", "--to", "b@example.net", "--text-file", "-", "--html-file", "-", "--from", "a@shop.example", "--subject", "Hi"}, "standard input", "mailroom send --help"},
		{[]string{"send", "--to", "b@example.net", "--text", "t", "--var", "a=b", "--from", "a@shop.example", "--subject", "Hi"}, "go with --template", "mailroom send --help"},
		{[]string{"send", "--to", "b@example.net", "--template", "receipt", "--var", "novalue"}, `invalid value "novalue" for flag --var`, "mailroom send --help"},
		{[]string{"send", "--to", "b@example.net", "--template", "receipt", "--tag", "novalue"}, `invalid value "novalue" for flag --tag`, "mailroom send --help"},
		{[]string{"send", "--to", "b@example.net", "--template", "receipt", "--category", "bulk"}, "transactional or marketing", "mailroom send --help"},
		{[]string{"send", "--to", "b@example.net", "--template", "receipt"}, "no API key", "mailroom send --help"},
		{[]string{"send", "--to", "b@example.net", "--template", "receipt", "--key", "k", "--url", "localhost:8443"}, "not a base URL", "mailroom send --help"},
		{[]string{"send", "--to", "b@example.net", "--template", "receipt", "Hello"}, "no arguments", "mailroom send --help"},
		{[]string{"messages", "list", "--limit", "0"}, "--limit is 1 to 100", "mailroom messages list --help"},
		{[]string{"messages", "list", "--status", "sent"}, `--status "sent"`, "mailroom messages list --help"},
		{[]string{"messages", "list", "--since", "yesterday"}, "not a time", "mailroom messages list --help"},
		{[]string{"messages", "list", "--tag", "kind"}, `invalid value "kind" for flag --tag`, "mailroom messages list --help"},
		{[]string{"messages", "get"}, "one argument", "mailroom messages get --help"},
		{[]string{"messages", "raw", "msg_1", "msg_2"}, "one argument", "mailroom messages raw --help"},
	}
	for _, tc := range cases {
		code, out, errOut := runCLI(tc.args...)
		if code != 2 || out != "" || !strings.Contains(errOut, tc.want) {
			t.Errorf("mailroom %s: exit %d, stdout %q, stderr:\n%s", strings.Join(tc.args, " "), code, out, errOut)
		}
		if tc.help != "" && (!strings.Contains(errOut, `"`+tc.help+`"`) || strings.Count(errOut, "\n") > 2) {
			t.Errorf("mailroom %s: the message should be two lines pointing at %q:\n%s", strings.Join(tc.args, " "), tc.help, errOut)
		}
	}
}

// `keys create` refuses a bad name or scope before it opens storage: on a
// first run opening would create the data directory and migrate a store
// only to answer that the account does not exist.
func TestKeysCreateChecksItsFlagsFirst(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	code, out, errOut := runCLI("keys", "create", "--account", "nope", "--scopes", "send,bogus")
	if code != 1 || out != "" || !strings.Contains(errOut, `unknown scope "bogus"`) {
		t.Errorf("exit %d, stdout %q, stderr:\n%s", code, out, errOut)
	}
	if entries, err := os.ReadDir(dir); err != nil || len(entries) != 0 {
		t.Errorf("the working directory holds %v (%v), want nothing: storage was opened", entries, err)
	}
}

// serve's --ip-pool defines pools (NAME=ADDRESS,…) and domains update's
// names one, and both have the environment twin MAILROOM_IP_POOL: a
// definition read from the environment, meant for serve, is refused with
// a message that says what to give instead.
func TestDomainsUpdateSaysWhichIPPoolItWants(t *testing.T) {
	t.Chdir(t.TempDir())
	t.Setenv("MAILROOM_IP_POOL", "bulk=192.0.2.10,192.0.2.11")
	code, out, errOut := runCLI("domains", "update", "shop.example", "--account", "acme")
	if code != 2 || out != "" || !strings.Contains(errOut, "give the NAME of a pool that serve's --ip-pool NAME=ADDRESS,… defines") {
		t.Errorf("exit %d, stdout %q, stderr:\n%s", code, out, errOut)
	}
	if _, err := os.Stat("mailroom-data"); err == nil {
		t.Error("the refused command made a data directory")
	}
}
