package e2e

import (
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/mailroom/mailroom/apitest"
	"github.com/mailroom/mailroom/require"
	"github.com/mailroom/mailroom/storetest"
)

// The PostgreSQL recipe of docs/api.md "Backups" works as written: a
// pg_dump of a store that nodes serve, loaded with pg_restore into an
// empty database, serves its keys again with the store's secret key, and
// holds a node with another key to the store's (the verifier travels with
// the dump). `mailroom backup` itself refuses PostgreSQL, pointing there.
func TestPostgreSQLDumpRecipe(t *testing.T) {
	for _, tool := range []string{"pg_dump", "pg_restore"} {
		if _, err := exec.LookPath(tool); err != nil {
			require.Missing(t, require.Postgres, "%s is not installed: %v", tool, err)
		}
	}
	source := storetest.NewPostgresDatabase(t)
	work := t.TempDir()
	key := printedKey.FindString(cli(t, work, nil, "accounts", "create", "acme", "--database-url", source))
	node := startServer(t, filepath.Join(work, "a"), "--database-url", source, "--secret-key", secretKeyOf(4))

	_, errOut, err := cliResult(work, nil, "backup", "--out", "x.db", "--database-url", source)
	if err == nil || !strings.Contains(errOut, "pg_dump") {
		t.Fatalf("mailroom backup on PostgreSQL: %v\n%s", err, errOut)
	}
	dump := filepath.Join(work, "mailroom.dump")
	if out, err := exec.Command("pg_dump", "--format=custom", "--file="+dump, source).CombinedOutput(); err != nil {
		t.Fatalf("pg_dump: %v\n%s", err, out)
	}
	node.stop(syscall.SIGTERM)

	target := storetest.NewPostgresDatabase(t) // created empty, as createdb does
	if out, err := exec.Command("pg_restore", "--no-owner", "--dbname="+target, dump).CombinedOutput(); err != nil {
		t.Fatalf("pg_restore: %v\n%s", err, out)
	}
	stderr, err := refusedStart(t, filepath.Join(work, "b"), "--database-url", target, "--secret-key", secretKeyOf(5))
	if err == nil || !strings.Contains(stderr, "every node of a store needs the same secret key") {
		t.Fatalf("a node with another key on the restored database: %v\n%s", err, stderr)
	}
	restored := startServer(t, filepath.Join(work, "c"), "--database-url", target, "--secret-key", secretKeyOf(4))
	if r := restored.client.Do(apitest.Request{Method: "GET", Path: "/v1/api-keys", Key: key}); r.Status != 200 {
		t.Fatalf("the key on the restored database: %d %s", r.Status, r.Body)
	}
}
