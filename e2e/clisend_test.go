package e2e

import (
	"encoding/json"
	"errors"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/mailroom/mailroom/client"
)

// sendScript is a shell script such as an operator's cron job: it sends
// with mailroom send, keeps the id, and checks the exit status of a send
// the service refuses, of a mistake in the command line, and of a service
// that cannot be reached. It runs where serve --dev ran, so that
// ./mailroom-data/tls/cert.pem is trusted without a flag.
const sendScript = `set -u
export MAILROOM_API_KEY="$(cat mailroom-data/dev-api-key)"
printf 'Thanks for your order.\n' > body.txt
id=$(mailroom send --from 'Shop <orders@mailroom.test>' --to ann@example.com \
	--to 'bob@example.com, "Doe, Carl" <carl@example.com>' --subject 'Your receipt' --text-file body.txt \
	--tag kind=receipt --tag order=42) || { echo "send failed: $?"; exit 1; }
echo "sent $id"

first=$(printf '<p>From standard input</p>' | mailroom send --from orders@mailroom.test --to dora@example.com \
	--subject 'Once' --html-file - --idempotency-key order-42-receipt)
again=$(printf '<p>From standard input</p>' | mailroom send --from orders@mailroom.test --to dora@example.com \
	--subject 'Once' --html-file - --idempotency-key order-42-receipt 2>again.txt)
echo "first $first again $again"

mailroom send --from a@not-mine.example --to x@example.com --subject Hi --text Hi 2>refused.txt
echo "refused exit $?"
mailroom send --to x@example.com --subject Hi 2>usage.txt
echo "usage exit $?"
mailroom send --url https://localhost:1 --retries 0 --from orders@mailroom.test --to x@example.com --subject Hi --text Hi 2>unreachable.txt
echo "unreachable exit $?"
mailroom send --data-dir elsewhere --from orders@mailroom.test --to x@example.com --subject Hi --text Hi 2>untrusted.txt
echo "untrusted exit $?"
`

// mailroom send from a shell script: it prints the id, answers a repeated
// idempotency key with the first id (and "duplicate" on stderr), exits 1 with the error code on a 4xx,
// 2 on a usage mistake and 1 with a clear message when it cannot reach the
// service or trust it. mailroom messages list, get and raw then show what
// was sent, and --json parses.
func TestCLISendFromAShell(t *testing.T) {
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Skip("no sh on PATH")
	}
	work := t.TempDir()
	dataDir := filepath.Join(work, "mailroom-data")
	s := startServer(t, dataDir, "--dev")
	// The certificate names localhost: the default --url's host.
	u, _ := url.Parse(s.base)
	base := "https://localhost:" + u.Port()

	cmd := exec.Command(sh, "-c", sendScript)
	cmd.Dir = work
	cmd.Env = append(os.Environ(), "PATH="+filepath.Dir(bin)+string(os.PathListSeparator)+os.Getenv("PATH"), "MAILROOM_URL="+base)
	outBytes, err := cmd.CombinedOutput()
	out := string(outBytes)
	if err != nil {
		t.Fatalf("the script failed: %v\n%s", err, out)
	}
	m := regexp.MustCompile(`(?m)^sent (msg_[0-9a-z]+)$`).FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("the script's send printed no id:\n%s", out)
	}
	id := m[1]
	read := func(name string) string {
		b, _ := os.ReadFile(filepath.Join(work, name))
		return string(b)
	}
	dup := regexp.MustCompile(`(?m)^first (msg_[0-9a-z]+) again (msg_[0-9a-z]+)$`).FindStringSubmatch(out)
	if dup == nil || dup[1] != dup[2] || !strings.HasPrefix(read("again.txt"), "mailroom send: duplicate: ") {
		t.Errorf("the same idempotency key twice printed:\n%s\nstderr of the second: %s", out, read("again.txt"))
	}
	for _, want := range []struct{ line, file, stderr string }{
		{"refused exit 1", "refused.txt", "mailroom send: domain_not_verified: "},
		{"usage exit 2", "usage.txt", "mailroom: send needs a body"},
		{"unreachable exit 1", "unreachable.txt", "mailroom send: cannot reach https://localhost:1: "},
		{"untrusted exit 1", "untrusted.txt", "mailroom send: the certificate of " + base + " is not trusted"},
	} {
		if !strings.Contains(out, want.line+"\n") || !strings.HasPrefix(read(want.file), want.stderr) {
			t.Errorf("want %q and stderr %q…; the script printed:\n%s\nstderr:\n%s", want.line, want.stderr, out, read(want.file))
		}
	}

	env := []string{"MAILROOM_API_KEY=" + s.devKey, "MAILROOM_URL=" + base}
	c := newAPIClient(s, s.devKey, nil)
	waitStatus(t, c, id, client.MessageDelivered)

	list := cli(t, work, env, "messages", "list", "--tag", "kind:receipt", "--tag", "order=42", "--since", "1h")
	if lines := strings.Split(strings.TrimSpace(list), "\n"); len(lines) != 2 ||
		!regexp.MustCompile(`^ID\s+CREATED\s+STATUS\s+FROM\s+TO\s+SUBJECT$`).MatchString(lines[0]) ||
		!regexp.MustCompile(`^`+id+`\s+\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ\s+delivered\s+Shop <orders@mailroom\.test>\s+ann@example\.com \+2\s+Your receipt$`).MatchString(lines[1]) {
		t.Errorf("messages list:\n%s", list)
	}
	get := cli(t, work, env, "messages", "get", id)
	for _, want := range []string{
		`(?m)^Message\s+` + id + `$`, `(?m)^Status\s+delivered$`, `(?m)^Subject\s+Your receipt$`,
		`(?m)^To\s+ann@example\.com, bob@example\.com, "Doe, Carl" <carl@example\.com>$`, `(?m)^Tags\s+kind=receipt, order=42$`,
		`(?m)^  carl@example\.com\s+delivered\s+1\s+\S+Z\s+-\s+\S+\s+-\s+(-|none|TLS\S+ \S+ \S+)\s+250 2\.0\.0 \S`, `(?m)^  \S+Z\s+email\.delivered\s+bob@example\.com\s+250 `,
	} {
		if !regexp.MustCompile(want).MatchString(get) {
			t.Errorf("messages get lacks %s:\n%s", want, get)
		}
	}
	raw := cli(t, work, env, "messages", "raw", id)
	want := string(must[[]byte](t, "GetRawMessage")(c.GetRawMessage(t.Context(), id)))
	if raw != want || !strings.Contains(raw, "Thanks for your order.") || !strings.Contains(raw, "Subject: Your receipt\r\n") {
		t.Errorf("messages raw printed other bytes than the API's:\n%.400q\nwant\n%.400q", raw, want)
	}

	// --json: one JSON document each.
	var page client.List[client.Message]
	if err := json.Unmarshal([]byte(cli(t, work, env, "messages", "list", "--json", "--limit", "1")), &page); err != nil ||
		len(page.Data) != 1 || page.Cursor() == "" {
		t.Errorf("messages list --json: %+v %v", page, err)
	}
	var all []client.Message
	if err := json.Unmarshal([]byte(cli(t, work, env, "messages", "list", "--json", "--all", "--limit", "1")), &all); err != nil || len(all) != 2 {
		t.Errorf("messages list --json --all: %d messages, %v", len(all), err)
	}
	var msg client.Message
	if err := json.Unmarshal([]byte(cli(t, work, env, "messages", "get", "--json", id)), &msg); err != nil ||
		msg.ID != id || len(msg.Recipients) != 3 || len(msg.Events) != 6 {
		t.Errorf("messages get --json: %+v %v", msg, err)
	}
	var sent client.SendResult
	if err := json.Unmarshal([]byte(cli(t, work, env, "send", "--json", "--from", "orders@mailroom.test", "--to", "eve@example.com",
		"--subject", "JSON", "--text", "Hi")), &sent); err != nil || sent.Status != client.SendQueued || !strings.HasPrefix(sent.MessageID, "msg_") {
		t.Errorf("send --json: %+v %v", sent, err)
	}

	// A template, its values from --var (dotted) and --vars-file.
	must[*client.Template](t, "CreateTemplate")(c.CreateTemplate(t.Context(), &client.TemplateRequest{Name: "receipt",
		From: "Shop <orders@mailroom.test>", Subject: "Receipt {{order.id}}",
		Text: "Thanks, {{customer.name}}.{{#order.paid}} Paid.{{/order.paid}}{{^order.paid}} Unpaid.{{/order.paid}}"}))
	if err := os.WriteFile(filepath.Join(work, "vars.json"), []byte(`{"order": {"paid": true}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	tid := strings.TrimSpace(cli(t, work, env, "send", "--template", "receipt", "--to", "ann@example.com",
		"--var", "customer.name=Ann", "--var", "order.id=1042", "--vars-file", "vars.json"))
	if got := waitStatus(t, c, tid, client.MessageDelivered); got.Subject != "Receipt 1042" || got.Template == nil || got.Template.Name != "receipt" {
		t.Errorf("the message sent with --template: %+v", got)
	}
	if raw := cli(t, work, env, "messages", "raw", tid); !strings.Contains(raw, "Thanks, Ann. Paid.") {
		t.Errorf("the template's text with --var and --vars-file:\n%s", raw)
	}

	// An id that is no message: the code on stderr, exit 1.
	_, errOut, err := cliResult(work, env, "messages", "get", "msg_00000000000000000000000000")
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 1 || !strings.HasPrefix(errOut, "mailroom messages get: not_found: ") {
		t.Errorf("messages get of no message: %v, stderr %q", err, errOut)
	}
	// A validation error lists each problem under the code.
	_, errOut, err = cliResult(work, env, "send", "--from", "orders@mailroom.test", "--to", "ann@,bob@example.com", "--subject", "Hi", "--text", "Hi")
	if !errors.As(err, &exit) || exit.ExitCode() != 1 || !regexp.MustCompile(`^mailroom send: validation_error: .*\n  to\[0\]: `).MatchString(errOut) {
		t.Errorf("send to a bad address: %v, stderr %q", err, errOut)
	}
}
