package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/mailroom/mailroom/client"
)

// userProgram is what a new user writes after reading client/README.md:
// the package imported as mailroom (leaving client to the variable), three
// lines to send, one to read the log entry back, the dev certificate
// trusted with WithCAFile, and a status compared without importing
// client/api.
const userProgram = `package main

import (
	"context"
	"fmt"
	"log"
	"os"

	mailroom "github.com/mailroom/mailroom/client"
)

func main() {
	ctx := context.Background()
	client := mailroom.New(os.Getenv("MAILROOM_URL"), os.Getenv("MAILROOM_API_KEY"),
		mailroom.WithCAFile(os.Getenv("MAILROOM_CERT")))
	res, err := client.Send(ctx, &mailroom.SendRequest{From: "Shop <orders@mailroom.test>",
		To: []string{"ann@example.com"}, Subject: "Your receipt", Text: "Thanks!"})
	if err != nil {
		log.Fatal(err)
	}
	msg, err := client.GetMessage(ctx, res.MessageID)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(res.Status == mailroom.SendQueued, msg.ID, msg.From, msg.To[0], msg.Subject)
}
`

// The judged scenario: a fresh module outside this repository requires
// the client (a replace line pointing at this copy, as client/README.md
// says), and a program of a few lines sends to serve --dev and reads its
// log entry, built with no module proxy: the client needs nothing but the
// standard library. go list -deps names no database or SMTP package.
func TestClientFromAFreshModule(t *testing.T) {
	work := t.TempDir()
	dataDir := filepath.Join(work, "mailroom-data")
	s := startServer(t, dataDir, "--dev")
	clientDir, err := filepath.Abs("../client")
	if err != nil {
		t.Fatal(err)
	}
	mod := t.TempDir()
	env := append(os.Environ(), "GOFLAGS=-mod=mod", "GOPROXY=off", "GOWORK=off", "GOTOOLCHAIN=local",
		"MAILROOM_URL="+s.base, "MAILROOM_API_KEY="+s.devKey, "MAILROOM_CERT="+filepath.Join(dataDir, "tls", "cert.pem"))
	goCmd := func(args ...string) string {
		t.Helper()
		cmd := exec.Command("go", args...)
		cmd.Dir, cmd.Env = mod, env
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("go %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return string(out)
	}
	goCmd("mod", "init", "example.com/receipts")
	goCmd("mod", "edit", "-require=github.com/mailroom/mailroom/client@v0.0.0", "-replace=github.com/mailroom/mailroom/client="+clientDir)
	if err := os.WriteFile(filepath.Join(mod, "main.go"), []byte(userProgram), 0o644); err != nil {
		t.Fatal(err)
	}

	out := goCmd("run", ".")
	m := regexp.MustCompile(`^true (msg_[0-9a-z]+) Shop <orders@mailroom\.test> ann@example\.com Your receipt\n$`).FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("the program printed %q", out)
	}
	// The message is the service's, as the dev key sees it.
	msg := must[*client.Message](t, "GetMessage")(newAPIClient(s, s.devKey, nil).GetMessage(t.Context(), m[1]))
	if msg.Subject != "Your receipt" {
		t.Errorf("the log entry: %+v", msg)
	}

	deps := strings.Fields(goCmd("list", "-deps", "-f", "{{if not .Standard}}{{.ImportPath}}{{end}}", "."))
	slices.Sort(deps)
	if want := []string{"example.com/receipts", "github.com/mailroom/mailroom/client", "github.com/mailroom/mailroom/client/api"}; !slices.Equal(deps, want) {
		t.Errorf("the program depends on %v beyond the standard library, want %v", deps, want)
	}
	for _, p := range strings.Fields(goCmd("list", "-deps", ".")) {
		if strings.Contains(p, "sql") || strings.Contains(p, "smtp") || strings.Contains(p, "pgx") || strings.Contains(p, "sqlite") {
			t.Errorf("the program pulls in %s", p)
		}
	}
	if b, err := os.ReadFile(filepath.Join(mod, "go.sum")); err == nil && len(b) > 0 {
		t.Errorf("go.sum lists modules: the client needs none\n%s", b)
	}
}
