package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"strings"
)

// command is one command of the binary. Its help (--help, -h, or `mailroom
// help NAME`) is built from this and from the flags the command itself
// registers, so that it lists exactly the flags the command reads.
type command struct {
	name     string    // the words after "mailroom": "keys revoke"
	synopsis string    // what follows them: "KEYID [--account NAME]"
	summary  string    // its line in `mailroom --help`
	about    string    // the paragraph of its own --help
	args     []operand // its positional arguments
	run      func(ctx context.Context, c *command, args []string, stdout, stderr io.Writer) error
}

// operand is a positional argument, named in capitals as in the synopsis.
type operand struct{ name, about string }

// commands are all the commands, in the order `mailroom --help` lists them.
// "accounts create" and its siblings form the group "accounts".
var commands = []*command{
	{name: "serve", synopsis: "[--dev] [flags]", summary: "run the service",
		about: "Runs the HTTPS API, delivery and the background work of one node. With --dev: a self-signed\n" +
			"certificate, an account \"dev\" with a verified sandbox domain, mail captured instead of sent, and the\n" +
			"HTTPS API on 127.0.0.1:8443 only.",
		run: serveCommand},
	{name: "accounts create", synopsis: "NAME", summary: "create an account and its first key",
		about: "Creates an account and a first API key holding every scope, printed once.",
		args:  []operand{{"NAME", "the account's name: 1 to 64 characters of a-z, 0-9, _ and -, starting with a letter or digit"}},
		run:   accountsCreate},
	{name: "accounts list", summary: "list accounts with their request rates",
		about: "Lists every account with its request rate and burst (\"(default)\" where it follows the defaults).",
		run:   accountsList},
	{name: "accounts update", synopsis: "NAME [--rate R] [--burst B]", summary: "set an account's request rate and burst",
		about: "Sets an account's request rate, burst or both; the part not given stays as it is.\n" +
			"Running nodes apply it within 10 s.",
		args: []operand{{"NAME", "the account's name"}},
		run:  accountsUpdate},
	{name: "keys create", synopsis: "--account NAME --scopes SCOPES [--name N] [--domain NAME]", summary: "create an API key, printed once",
		about: "Creates an API key of the account with the given scopes. The key is shown this once.\n" +
			"With --domain the key sends from that one domain of the account only (mail from any other is\n" +
			"refused with domain_not_verified), as Resend's sending_access keys with a domain_id do; such a key\n" +
			"needs the send scope and must not have keys, which could create an unrestricted key.",
		run: keysCreate},
	{name: "keys list", synopsis: "--account NAME", summary: "list an account's API keys",
		about: "Lists the account's API keys, newest first, with the domain each may send from (any: every domain\n" +
			"of the account), their status and last use. Secrets are never shown.",
		run: keysList},
	{name: "keys revoke", synopsis: "KEYID [--account NAME]", summary: "revoke an API key",
		about: "Revokes an API key: it fails from its next request on, on every node. Without --account any\n" +
			"account's key is revoked, and the output names its account; with --account, a key of another\n" +
			"account is refused and stays as it is.",
		args: []operand{{"KEYID", `the key's id: the 16 characters after "mailroom_" in the key, as "keys list" shows them`}},
		run:  keysRevoke},
	{name: "domains update", synopsis: "DOMAIN --account NAME [--ip-pool POOL] [--tls opportunistic|enforced] [--open-tracking on|off] [--click-tracking on|off]",
		summary: "set a domain's IP pool, TLS and engagement tracking",
		about: "Assigns a sending domain the pool of source addresses its mail leaves from: the NAME of a pool that\n" +
			"serve's --ip-pool NAME=ADDRESS[@EHLO-NAME],… defines on every node. --ip-pool \"\" goes back to the\n" +
			"default pool. --tls enforced makes every delivery from the domain need STARTTLS with a certificate\n" +
			"valid for the MX host (else it is deferred, and fails with reason tls_required after the retry\n" +
			"window); --tls opportunistic is the default. --open-tracking and --click-tracking turn tracking of\n" +
			"opens and clicks on or off for the domain's sends accepted from then on (a send may say otherwise;\n" +
			"off by default: see docs/api.md \"Engagement tracking\"). The API shows the domain's ipPool, tls,\n" +
			"openTracking and clickTracking (PATCH /v1/domains/{domain} sets all but ipPool too). Running nodes\n" +
			"apply them within 10 s.",
		args: []operand{{"DOMAIN", "the sending domain, as the account added it (any case; IDNs in either form)"}},
		run:  domainsUpdate},
	{name: "send", synopsis: "--from F --to T --subject S (--text T | --html H | --template NAME [--var K=V]…)",
		summary: "send a message through the API",
		about: "Sends one message through the HTTPS API (POST /v1/send) and prints its id alone on stdout; when\n" +
			"--idempotency-key was used before, that is the first message's id and stderr says \"duplicate\".\n" +
			"With --json, prints the API's answer. The key comes from --key or MAILROOM_API_KEY. The certificate\n" +
			"of --url is checked against the system's CAs and --cacert, or else the tls/cert.pem of --data-dir\n" +
			"when there (serve --dev's own).\n" +
			"429, 503 and network errors are retried under one idempotency key, so a message is never sent twice.\n" +
			"Exit status: 0 sent; 1 refused (\"mailroom send: CODE: message\" on stderr, then each problem) or\n" +
			"not reached (then the message may have been accepted: send again with the same --idempotency-key);\n" +
			"2 a mistake in the command line.",
		run: sendCommand},
	{name: "messages list", synopsis: "[--status S] [--to A] [--tag K:V]… [--since T] [--limit N | --all]",
		summary: "list the email log through the API",
		about: "Lists the email log (GET /v1/messages), newest first, as a table: id, creation time (UTC, RFC 3339),\n" +
			"status, sender, the first recipient (+ how many more) and subject. Filters all must match. One page\n" +
			"unless --all; when more follow, stderr says which --cursor continues. --json prints the API's JSON.\n" +
			"The key, --url and the certificate are as for send.",
		run: messagesList},
	{name: "messages get", synopsis: "ID", summary: "show a message, its recipients and timeline",
		about: "Shows a message of the email log (GET /v1/messages/ID): its fields, each recipient's state with its\n" +
			"next attempt, the site its last attempt went to, why it was last deferred and its last SMTP reply, and\n" +
			"the timeline (times in UTC). A tracked message also shows each recipient's opens and clicks and its\n" +
			"links' clicks. --json prints the API's JSON. The key, --url and the certificate are as for send.",
		args: []operand{{"ID", "the message's id, msg_…, as send and messages list print it"}},
		run:  messagesGet},
	{name: "messages raw", synopsis: "ID", summary: "print a message's signed bytes",
		about: "Writes the exact signed RFC 5322 bytes of a message (GET /v1/messages/ID/raw) to stdout, as they\n" +
			"are. A scheduled or canceled message has none (invalid_state). The key, --url and the certificate\n" +
			"are as for send.",
		args: []operand{{"ID", "the message's id, msg_…"}},
		run:  messagesRaw},
	{name: "sites", synopsis: "[--json] [--metrics-url URL]", summary: "show each destination site's limits and throttling on a running node",
		about: "Prints each destination site a running node sent to in the last hour, per source address: its\n" +
			"rate (messages a minute) and connections against their limits as the site's replies adapted them,\n" +
			"a suspension's end, and its last throttling reply. Read from the node's metrics listener (its\n" +
			"--metrics-listen). --json prints the node's JSON, with the last 10 throttling replies.",
		run: sitesCommand},
	{name: "migrate", summary: "apply storage migrations",
		about: "Applies the storage migrations the database lacks (serve does the same on start), for operators\n" +
			"who migrate before a roll-out.",
		run: migrateCommand},
	{name: "backup", synopsis: "--out FILE", summary: "copy the SQLite store while serve runs",
		about: "Writes a consistent copy of the SQLite store in --data-dir to FILE, while serve runs on it: every\n" +
			"change committed before the copy began is in it, none after. The secret key is not: keep the data\n" +
			"directory's secret.key (or your --secret-key) apart from backups. On PostgreSQL, use pg_dump\n" +
			"(docs/api.md \"Backups\").",
		run: backupCommand},
	{name: "restore", synopsis: "--from FILE --data-dir DIR", summary: "put a backup back as a data directory's store",
		about: "Puts the store of a backup (as backup wrote it) in DIR, refused while serve runs there, and refused\n" +
			"unless the secret key (DIR's secret.key, or --secret-key) is the one the store was started with. A\n" +
			"backup from an older Mailroom is migrated; a store DIR held is kept beside it, renamed. Then start\n" +
			"serve on DIR: mail that was queued is delivered.",
		run: restoreCommand},
	{name: "version", summary: "print the version",
		about: "Prints the version, platform and Go version of this binary.",
		run:   versionCommand},
}

// storageFlagSet is the flag set of a command that opens storage: the
// storage flags are registered; the command adds its own before parse.
func (c *command) storageFlagSet() (*flag.FlagSet, *storageFlags) {
	fs := newFlagSet(c.name)
	sf := &storageFlags{}
	sf.register(fs)
	return fs, sf
}

// parse parses the command's flags. On --help it prints the command's
// usage to stdout and returns errHelpShown.
func (c *command) parse(fs *flag.FlagSet, args []string, stdout io.Writer) ([]string, error) {
	rest, err := parseFlags(fs, args)
	if err == flag.ErrHelp {
		c.printHelp(stdout, fs)
		return nil, errHelpShown
	}
	return rest, err
}

// printHelp writes the command's usage: synopsis, what it does, its
// arguments, and the flags it reads.
func (c *command) printHelp(w io.Writer, fs *flag.FlagSet) {
	line := "mailroom " + c.name
	if c.synopsis != "" {
		line += " " + c.synopsis
	}
	if hasFlags(fs) && !strings.HasSuffix(line, "[flags]") {
		line += " [flags]"
	}
	fmt.Fprintf(w, "Usage: %s\n\n%s\n", line, c.about)
	if len(c.args) > 0 {
		fmt.Fprintln(w, "\nArguments:")
		for _, a := range c.args {
			fmt.Fprintf(w, "  %s\n        %s\n", a.name, a.about)
		}
	}
	if hasFlags(fs) {
		fmt.Fprintln(w, "\nFlags (each also read from its environment twin):")
		printFlags(w, fs)
	}
}

// lookup finds the command args start with and returns the arguments that
// follow it. group is the group args name ("keys") when they name one,
// which the caller's help and hints then refer to.
func lookup(args []string) (c *command, rest []string, group string) {
	for _, c := range commands {
		words := strings.Fields(c.name)
		if len(args) >= len(words) && strings.Join(args[:len(words)], " ") == c.name {
			return c, args[len(words):], ""
		}
	}
	if len(args) > 0 && len(groupCommands(args[0])) > 0 {
		return nil, args[1:], args[0]
	}
	return nil, args, ""
}

// groupCommands are the commands of group ("keys create", "keys list", …).
func groupCommands(group string) []*command {
	var out []*command
	for _, c := range commands {
		if strings.HasPrefix(c.name, group+" ") {
			out = append(out, c)
		}
	}
	return out
}

// subcommandNames lists a group's commands for messages: "create, list or update".
func subcommandNames(group string) string {
	var names []string
	for _, c := range groupCommands(group) {
		names = append(names, strings.TrimPrefix(c.name, group+" "))
	}
	if len(names) < 2 {
		return strings.Join(names, "")
	}
	return strings.Join(names[:len(names)-1], ", ") + " or " + names[len(names)-1]
}

// printList writes "mailroom NAME SYNOPSIS   summary" lines for cs.
func printList(w io.Writer, cs []*command) {
	const column = 46
	for _, c := range cs {
		line := "mailroom " + c.name
		if c.synopsis != "" {
			line += " " + c.synopsis
		}
		if len(line) > column-2 {
			fmt.Fprintf(w, "  %s\n  %-*s%s\n", line, column, "", c.summary)
		} else {
			fmt.Fprintf(w, "  %-*s%s\n", column, line, c.summary)
		}
	}
}

// printUsage is `mailroom --help`.
func printUsage(w io.Writer) {
	fmt.Fprint(w, "Mailroom, a self-hosted transactional email service.\n\nUsage:\n")
	printList(w, commands)
	fmt.Fprint(w, "\nEvery flag has an environment twin: --data-dir is MAILROOM_DATA_DIR, and so on.\n"+
		"Run \"mailroom COMMAND --help\" (or \"mailroom help COMMAND\") for a command's arguments and flags.\n")
}

// printGroupUsage is `mailroom keys --help`.
func printGroupUsage(w io.Writer, group string) {
	fmt.Fprintf(w, "Usage: mailroom %s COMMAND [arguments] [flags]\n\nCommands:\n", group)
	printList(w, groupCommands(group))
	fmt.Fprintf(w, "\nRun \"mailroom %s COMMAND --help\" for a command's arguments and flags.\n", group)
}
