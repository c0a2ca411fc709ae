package e2e

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/mailroom/mailroom"
	"github.com/mailroom/mailroom/apitest"
	"github.com/mailroom/mailroom/storetest"
)

var printedKey = regexp.MustCompile(`mailroom_[a-z0-9]{16}_[0-9A-Za-z]{43}`)

// The operator manages accounts and keys from the command line while the
// service runs; a key revoked there fails on the very next request.
func TestCLIWhileServing(t *testing.T) {
	storetest.Each(t, func(t *testing.T, eng storetest.Engine) {
		work := t.TempDir()
		dataDir := filepath.Join(work, "data")
		storage := append([]string{"--data-dir", dataDir}, eng.Storage(t)...)
		s := startServer(t, dataDir, storage...)

		out := cli(t, work, nil, append([]string{"accounts", "create", "acme"}, storage...)...)
		admin := printedKey.FindString(out)
		if admin == "" || !strings.Contains(out, "acct_") {
			t.Fatalf("accounts create printed:\n%s", out)
		}
		if _, _, err := cliResult(work, nil, append([]string{"accounts", "create", "acme"}, storage...)...); err == nil {
			t.Fatal("creating an account twice succeeded")
		}
		if out := cli(t, work, nil, append([]string{"accounts", "list"}, storage...)...); !strings.Contains(out, "acme") {
			t.Fatalf("accounts list:\n%s", out)
		}

		list := apitest.Request{Method: "GET", Path: "/v1/api-keys", Key: admin}
		if r := s.client.Do(list); r.Status != 200 {
			t.Fatalf("first request: %d %s", r.Status, r.Body)
		}

		out = cli(t, work, nil, append([]string{"keys", "create", "--account", "acme", "--scopes", "send,domains", "--name", "billing"}, storage...)...)
		sendKey := printedKey.FindString(out)
		if r := s.client.Do(apitest.Request{Method: "GET", Path: "/v1/api-keys", Key: sendKey}); r.Code() != mailroom.ECodeInsufficientScope {
			t.Fatalf("a send,domains key listed keys: %d %s", r.Status, r.Body)
		}
		if _, errOut, err := cliResult(work, nil, append([]string{"keys", "create", "--account", "acme", "--scopes", "send,fly"}, storage...)...); err == nil || !strings.Contains(errOut, "fly") {
			t.Fatalf("an unknown scope was accepted: %v %s", err, errOut)
		}

		// --account is enforced: acme's operator pasting globex's key id
		// is refused, and globex's key keeps working.
		globex := printedKey.FindString(cli(t, work, nil, append([]string{"accounts", "create", "globex"}, storage...)...))
		globexID, _, _ := mailroom.ParseAPIKey(globex)
		globexList := apitest.Request{Method: "GET", Path: "/v1/api-keys", Key: globex}
		out, errOut, err := cliResult(work, nil, append([]string{"keys", "revoke", "--account", "acme", globexID}, storage...)...)
		if err == nil || !strings.Contains(errOut, "no key "+globexID+" in account acme") || strings.Contains(out, "revoked") {
			t.Fatalf("keys revoke --account acme <globex's key>: %v\nstdout: %s\nstderr: %s", err, out, errOut)
		}
		if r := s.client.Do(globexList); r.Status != 200 {
			t.Fatalf("globex's key after acme's refused revoke: %d %s", r.Status, r.Body)
		}
		if _, errOut, err := cliResult(work, nil, append([]string{"keys", "revoke", "--account", "initech", globexID}, storage...)...); err == nil || !strings.Contains(errOut, "initech") {
			t.Fatalf("keys revoke --account of no account: %v %s", err, errOut)
		}
		if out := cli(t, work, nil, append([]string{"keys", "revoke", "--account", "globex", globexID}, storage...)...); !strings.Contains(out, "of account globex revoked") {
			t.Fatalf("keys revoke --account globex: %s", out)
		}
		if r := s.client.Do(globexList); r.Code() != mailroom.ECodeAPIKeyRevoked {
			t.Fatalf("globex's key after its own account's revoke: %d %s", r.Status, r.Body)
		}

		// Without --account, the key's own account is revoked and named.
		keyID, _, _ := mailroom.ParseAPIKey(admin)
		if out := cli(t, work, nil, append([]string{"keys", "revoke", keyID}, storage...)...); !strings.Contains(out, "Key "+keyID+" of account acme revoked") {
			t.Fatalf("keys revoke KEYID: %s", out)
		}
		// Same client, same kept-alive connection.
		if r := s.client.Do(list); r.Status != 401 || r.Code() != mailroom.ECodeAPIKeyRevoked {
			t.Fatalf("after CLI revocation: %d %s", r.Status, r.Body)
		}
		out = cli(t, work, nil, append([]string{"keys", "list", "--account", "acme"}, storage...)...)
		if !regexp.MustCompile(keyID+`.*revoked`).MatchString(out) || !strings.Contains(out, "billing") {
			t.Fatalf("keys list:\n%s", out)
		}

		if eng.Name == "sqlite" {
			assertNoSecretsIn(t, dataDir, admin, sendKey)
		}
	})
}

// assertNoSecretsIn fails if any file below dir holds a key's secret.
func assertNoSecretsIn(t *testing.T, dir string, keys ...string) {
	t.Helper()
	err := filepath.Walk(dir, func(path string, info os.FileInfo, err error) error {
		if err != nil || info.IsDir() {
			return err
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for _, k := range keys {
			_, secret, _ := mailroom.ParseAPIKey(k)
			if bytes.Contains(data, []byte(secret)) {
				t.Errorf("%s holds a key secret", path)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	info, err := os.Stat(filepath.Join(dir, "mailroom.db"))
	if err != nil || info.Mode().Perm() != 0o600 {
		t.Errorf("mailroom.db should be 0600: %v %v", err, info.Mode())
	}
}

// Every flag has a MAILROOM_* twin.
func TestEnvironmentTwins(t *testing.T) {
	work := t.TempDir()
	env := []string{"MAILROOM_DATA_DIR=" + filepath.Join(work, "from-env")}
	cli(t, work, env, "accounts", "create", "envco")
	if _, err := os.Stat(filepath.Join(work, "from-env", "mailroom.db")); err != nil {
		t.Fatalf("MAILROOM_DATA_DIR was not used: %v", err)
	}
	if out := cli(t, work, env, "accounts", "list"); !strings.Contains(out, "envco") {
		t.Fatalf("accounts list: %s", out)
	}
	// A flag beats its twin: the flag's directory, which holds no store,
	// is refused rather than the environment's listed.
	other := filepath.Join(work, "other")
	if out, errOut, err := cliResult(work, env, "accounts", "list", "--data-dir", other); err == nil || strings.Contains(out, "envco") ||
		!strings.Contains(errOut, "no store at "+other) {
		t.Fatalf("the flag did not override the environment: %v: %s%s", err, out, errOut)
	}
	if out := cli(t, work, env, "migrate"); !strings.Contains(out, "up to date") {
		t.Fatalf("migrate: %s", out)
	}
	if out := cli(t, work, nil, "version"); !strings.HasPrefix(out, "mailroom ") {
		t.Fatalf("version: %s", out)
	}
	if _, _, err := cliResult(work, nil, "frobnicate"); err == nil {
		t.Fatal("an unknown command exited 0")
	}
}
