package e2e

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/base64"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mailroom/mailroom/apitest"
	"github.com/mailroom/mailroom/storetest"
)

// secretKeyOf is a --secret-key value: 32 bytes of b.
func secretKeyOf(b byte) string {
	return base64.StdEncoding.EncodeToString(bytes.Repeat([]byte{b}, 32))
}

// refusedStart runs `mailroom serve` with args, which must refuse to start:
// it returns its stderr and exit error, and fails the test if the node is
// still running after a minute (it started).
func refusedStart(t *testing.T, dataDir string, args ...string) (stderrText string, exitErr error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, append([]string{"serve", "--listen", "127.0.0.1:0", "--metrics-listen", "", "--data-dir", dataDir}, args...)...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	if ctx.Err() != nil {
		t.Fatalf("mailroom serve %s was still running after a minute; stdout:\n%s", strings.Join(args, " "), stdout.String())
	}
	if strings.Contains(stdout.String(), "Mailroom is serving") {
		t.Fatalf("mailroom serve started:\n%s", stdout.String())
	}
	return stderr.String(), err
}

// A second PostgreSQL node given another secret key refuses to start and
// says that every node of a store needs the same key; one given the same
// key starts beside the first; a store from before (no verifier) is given
// the verifier of the first key to start on it that opens the DKIM keys it
// holds, and holds later nodes to it.
func TestSecretKeyOnePerPostgreSQLStore(t *testing.T) {
	dbURL := storetest.NewPostgresDatabase(t)
	work := t.TempDir()
	storage := []string{"--database-url", dbURL, "--hostname", "mail.example.net"}
	first := startServer(t, filepath.Join(work, "a"), append(storage, "--secret-key", secretKeyOf(1))...)
	// A domain, whose DKIM key the store holds sealed under key 1.
	key := printedKey.FindString(cli(t, work, nil, "accounts", "create", "acme", "--database-url", dbURL))
	if r := first.client.Do(apitest.Request{Method: "POST", Path: "/v1/domains", Key: key, Body: map[string]string{"name": "shop.example"}}); r.Status != 201 {
		t.Fatalf("add a domain: %d %s", r.Status, r.Body)
	}

	stderr, err := refusedStart(t, filepath.Join(work, "b"), append(storage, "--secret-key", secretKeyOf(2))...)
	if err == nil || !strings.Contains(stderr, "every node of a store needs the same secret key") {
		t.Fatalf("a node with another key: exit %v, stderr:\n%s", err, stderr)
	}
	if strings.Contains(stderr, secretKeyOf(2)) || strings.Contains(stderr, secretKeyOf(1)) {
		t.Fatalf("the refusal quotes a secret key:\n%s", stderr)
	}
	// Without --secret-key, a node makes a key of its own in its data
	// directory: refused too, and the wrong key is not left there.
	stderr, err = refusedStart(t, filepath.Join(work, "c"), storage...)
	if err == nil || !strings.Contains(stderr, "every node of a store needs the same secret key") {
		t.Fatalf("a node with a key of its own: exit %v, stderr:\n%s", err, stderr)
	}
	if _, err := os.Stat(filepath.Join(work, "c", "secret.key")); err == nil {
		t.Error("the refused node left the key it made in its data directory")
	}

	startServer(t, filepath.Join(work, "d"), append(storage, "--secret-key", secretKeyOf(1))...)
	first.stop(syscall.SIGTERM)

	// A store from before keeps no verifier: its first start writes one,
	// of a key that opens the DKIM keys it holds.
	db, err := sql.Open("pgx", dbURL)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Exec(`DELETE FROM secret_verifier`); err != nil {
		t.Fatal(err)
	}
	stderr, err = refusedStart(t, filepath.Join(work, "e"), append(storage, "--secret-key", secretKeyOf(3))...)
	if err == nil || !strings.Contains(stderr, "every node of a store needs the same secret key") {
		t.Fatalf("a key that opens none of a store's DKIM keys: exit %v, stderr:\n%s", err, stderr)
	}
	startServer(t, filepath.Join(work, "f"), append(storage, "--secret-key", secretKeyOf(1))...)
	var n int
	if err := db.QueryRow(`SELECT count(*) FROM secret_verifier`).Scan(&n); err != nil || n != 1 {
		t.Fatalf("verifiers after a store from before started: %d, %v", n, err)
	}
	if _, err := db.Exec(`DELETE FROM domains`); err != nil { // nothing sealed left to try a key on
		t.Fatal(err)
	}
	stderr, err = refusedStart(t, filepath.Join(work, "g"), append(storage, "--secret-key", secretKeyOf(3))...)
	if err == nil || !strings.Contains(stderr, "every node of a store needs the same secret key") {
		t.Fatalf("a node with another key than the verifier's: exit %v, stderr:\n%s", err, stderr)
	}
}

// On SQLite the key lives in the data directory's secret.key: a key file
// changed (or lost, and made anew) after the store's first start is
// refused, saying to put the store's key back; the key restored, it starts.
func TestSecretKeyFileChangedIsRefused(t *testing.T) {
	dataDir := filepath.Join(t.TempDir(), "data")
	keyFile := filepath.Join(dataDir, "secret.key")
	s := startServer(t, dataDir, "--hostname", "mail.example.net")
	if err := s.stop(syscall.SIGTERM); err != nil {
		t.Fatalf("stop: %v\n%s", err, s.Stderr())
	}
	original, err := os.ReadFile(keyFile)
	if err != nil {
		t.Fatal(err)
	}

	if err := os.WriteFile(keyFile, []byte(secretKeyOf(7)+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	stderr, err := refusedStart(t, dataDir, "--hostname", "mail.example.net")
	if err == nil || !strings.Contains(stderr, "not the one this store was started with") {
		t.Fatalf("a changed key file: exit %v, stderr:\n%s", err, stderr)
	}

	if err := os.Remove(keyFile); err != nil {
		t.Fatal(err)
	}
	stderr, err = refusedStart(t, dataDir, "--hostname", "mail.example.net")
	if err == nil || !strings.Contains(stderr, "put back the secret.key") {
		t.Fatalf("a lost key file: exit %v, stderr:\n%s", err, stderr)
	}
	if _, err := os.Stat(keyFile); err == nil {
		t.Fatal("the refused start left a new key file behind")
	}

	if err := os.WriteFile(keyFile, original, 0o600); err != nil {
		t.Fatal(err)
	}
	startServer(t, dataDir, "--hostname", "mail.example.net")
}
