package main

import (
	"errors"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mailroom/mailroom/sealer"
	"github.com/mailroom/mailroom/storetest"
)

// writeSecret writes content to a fresh file (0600) and returns its path.
func writeSecret(t *testing.T, content string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "secret")
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// A secret flag's file form supplies the flag, from the command line or
// its environment twin, dropping one trailing line break (what an editor
// or `echo` leaves) and no more; both forms at once, a missing file and an
// empty one are each refused, saying which flag.
func TestSecretFlagFileForm(t *testing.T) {
	parse := func(args ...string) (string, error) {
		fs := newFlagSet("test")
		var v string
		secretFlag(fs, &v, "secret-key", "the key")
		_, err := parseFlags(fs, args)
		return v, err
	}
	for content, want := range map[string]string{"k1": "k1", "k1\n": "k1", "k1\r\n": "k1", "k1\n\n": "k1\n", " k1 \n": " k1 "} {
		if got, err := parse("--secret-key-file", writeSecret(t, content)); err != nil || got != want {
			t.Errorf("file holding %q: %q, %v; want %q", content, got, err, want)
		}
	}
	t.Run("environment", func(t *testing.T) {
		t.Setenv("MAILROOM_SECRET_KEY_FILE", writeSecret(t, "from-env\n"))
		if got, err := parse(); err != nil || got != "from-env" {
			t.Errorf("MAILROOM_SECRET_KEY_FILE: %q, %v", got, err)
		}
	})
	conflict := "give --secret-key or --secret-key-file, not both"
	t.Run("both on the command line", func(t *testing.T) {
		_, err := parse("--secret-key", "k2", "--secret-key-file", writeSecret(t, "k1"))
		if !errors.As(err, new(usageError)) || !strings.Contains(err.Error(), conflict) {
			t.Errorf("got %v, want a usage error %q", err, conflict)
		}
	})
	t.Run("flag and environment", func(t *testing.T) {
		t.Setenv("MAILROOM_SECRET_KEY", "k2")
		_, err := parse("--secret-key-file", writeSecret(t, "k1"))
		if !errors.As(err, new(usageError)) || !strings.Contains(err.Error(), conflict) || !strings.Contains(err.Error(), "MAILROOM_SECRET_KEY") {
			t.Errorf("got %v, want a usage error %q naming the variables", err, conflict)
		}
	})
	if _, err := parse("--secret-key-file", filepath.Join(t.TempDir(), "none")); err == nil || !strings.Contains(err.Error(), "--secret-key-file: open") {
		t.Errorf("missing file: %v", err)
	}
	if _, err := parse("--secret-key-file", writeSecret(t, "\n")); err == nil || !strings.Contains(err.Error(), "is empty") {
		t.Errorf("empty file: %v", err)
	}
}

// Every command that takes a secret flag takes its file form: the storage
// commands --database-url-file (or MAILROOM_DATABASE_URL_FILE), serve also
// --secret-key-file and --relay-url-file. A conflict is a usage error
// (exit 2) before anything is opened.
func TestCommandsTakeSecretFiles(t *testing.T) {
	t.Chdir(t.TempDir())
	for _, args := range [][]string{
		{"serve", "--secret-key", "x", "--secret-key-file", writeSecret(t, "y")},
		{"serve", "--relay-url", "smtp://a", "--relay-url-file", writeSecret(t, "smtp://b")},
		{"serve", "--database-url", "postgres://a", "--database-url-file", writeSecret(t, "postgres://b")},
		{"migrate", "--database-url", "postgres://a", "--database-url-file", writeSecret(t, "postgres://b")},
		{"accounts", "list", "--database-url", "postgres://a", "--database-url-file", writeSecret(t, "postgres://b")},
		{"keys", "list", "--account", "acme", "--database-url", "postgres://a", "--database-url-file", writeSecret(t, "postgres://b")},
	} {
		code, out, errOut := runCLI(args...)
		if code != 2 || out != "" || !strings.Contains(errOut, "not both") {
			t.Errorf("mailroom %s: exit %d, stdout %q, stderr:\n%s", strings.Join(args, " "), code, out, errOut)
		}
	}
	if entries, _ := os.ReadDir("."); len(entries) != 0 {
		t.Errorf("a refused command line left %v behind", entries)
	}

	// serve reads the key from its file: it makes no key file of its own.
	// (It stops at the bad --delivery, after the key was loaded.)
	key := "AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8=\n"
	code, out, errOut := runCLI("serve", "--data-dir", "d1", "--secret-key-file", writeSecret(t, key), "--delivery", "pigeon")
	if code != 2 || !strings.Contains(errOut, "--delivery must be") || strings.Contains(out, "Made a secret key") {
		t.Errorf("serve --secret-key-file: exit %d, stdout %q, stderr:\n%s", code, out, errOut)
	}
	if _, err := os.Stat(filepath.Join("d1", sealer.KeyFileName)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("serve --secret-key-file made a key file in the data directory (%v)", err)
	}
	// The relay URL comes from its file: its mistake is reported.
	code, _, errOut = runCLI("serve", "--data-dir", "d2", "--delivery", "relay", "--relay-url-file", writeSecret(t, "http://relay.example\n"))
	if code != 2 || !strings.Contains(errOut, `relay URL scheme "http"`) {
		t.Errorf("serve --relay-url-file: exit %d, stderr:\n%s", code, errOut)
	}

	t.Run("postgres", func(t *testing.T) {
		dbFile := writeSecret(t, storetest.NewPostgresDatabase(t)+"\n")
		if code, out, errOut := runCLI("migrate", "--database-url-file", dbFile); code != 0 || !strings.Contains(out, "(PostgreSQL)") {
			t.Fatalf("migrate --database-url-file: exit %d, stdout %q, stderr:\n%s", code, out, errOut)
		}
		if code, out, errOut := runCLI("accounts", "create", "acme", "--database-url-file", dbFile); code != 0 {
			t.Fatalf("accounts create: exit %d, stdout %q, stderr:\n%s", code, out, errOut)
		}
		t.Setenv("MAILROOM_DATABASE_URL_FILE", dbFile)
		if code, out, errOut := runCLI("accounts", "list"); code != 0 || !strings.Contains(out, "acme") {
			t.Errorf("accounts list with MAILROOM_DATABASE_URL_FILE: exit %d, stdout %q, stderr:\n%s", code, out, errOut)
		}
		if code, out, errOut := runCLI("keys", "list", "--account", "acme"); code != 0 || !strings.Contains(out, "default") {
			t.Errorf("keys list with MAILROOM_DATABASE_URL_FILE: exit %d, stdout %q, stderr:\n%s", code, out, errOut)
		}
	})
}

// A database URL's password appears in no output, whichever form gave it
// and whether the database answers or not.
func TestDatabasePasswordNotShown(t *testing.T) {
	t.Chdir(t.TempDir())
	const password = "hunter2-Pa55"
	unreachable := "postgres://mailroom:" + password + "@127.0.0.1:1/mailroom?connect_timeout=5"
	check := func(args ...string) {
		t.Helper()
		code, out, errOut := runCLI(args...)
		if strings.Contains(out+errOut, password) {
			t.Errorf("mailroom %s (exit %d) shows the password:\nstdout: %s\nstderr: %s", strings.Join(args, " "), code, out, errOut)
		}
	}
	check("migrate", "--database-url", unreachable)
	check("migrate", "--database-url-file", writeSecret(t, unreachable))
	check("migrate", "--database-url", "postgres://mailroom:"+password+"@[::1")
	check("serve", "--database-url", unreachable, "--metrics-listen", "")
	if admin := os.Getenv(storetest.EnvDatabaseURL); admin != "" {
		// A reachable database: the password is given, and ignored by a
		// server that trusts loopback.
		u, err := url.Parse(storetest.NewPostgresDatabase(t))
		if err != nil {
			t.Fatal(err)
		}
		u.User = url.UserPassword(u.User.Username(), password)
		check("migrate", "--database-url", u.String())
		check("accounts", "create", "acme", "--database-url", u.String())
	}
}
