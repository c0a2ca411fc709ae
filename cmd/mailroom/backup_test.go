package main

import (
	"database/sql"
	"encoding/base64"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// backup and restore copy SQLite stores only: on PostgreSQL they refuse,
// pointing at the pg_dump recipe; restore refuses a file that is not a
// Mailroom SQLite store and a data directory without a key, and leaves
// nothing behind for either.
func TestBackupAndRestoreRefusals(t *testing.T) {
	t.Chdir(t.TempDir())
	if err := os.WriteFile("notes.txt", []byte("not a database\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	other, err := sql.Open("sqlite", "file:other.db")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := other.Exec("CREATE TABLE t (x)"); err != nil {
		t.Fatal(err)
	}
	other.Close()
	key := base64.StdEncoding.EncodeToString(make([]byte, 32))
	for _, tc := range []struct {
		args []string
		code int
		says string
	}{
		{[]string{"backup", "--out", "b.db", "--database-url", "postgres://127.0.0.1:1/x"}, 1, `pg_dump and restore with pg_restore, as docs/api.md "Backups"`},
		{[]string{"restore", "--from", "b.db", "--data-dir", "d", "--database-url", "postgres://127.0.0.1:1/x"}, 1, "pg_dump"},
		{[]string{"backup", "--data-dir", "d"}, 2, "backup needs --out FILE"},
		{[]string{"backup", "--out", "b.db", "--data-dir", "d"}, 1, "no store at d"},
		{[]string{"restore", "--data-dir", "d"}, 2, "restore needs --from FILE"},
		{[]string{"restore", "--from", "notes.txt", "--data-dir", "d", "--secret-key", key}, 1, "not a Mailroom SQLite store"},
		{[]string{"restore", "--from", "other.db", "--data-dir", "d", "--secret-key", key}, 1, "holds no Mailroom store"},
		{[]string{"restore", "--from", "other.db", "--data-dir", "d"}, 1, "copy the store's secret key (kept apart from its backups) to d/secret.key"},
	} {
		code, out, errOut := runCLI(tc.args...)
		if code != tc.code || out != "" || !strings.Contains(errOut, tc.says) {
			t.Errorf("mailroom %s: exit %d, stdout %q, stderr:\n%s\nwant exit %d saying %q",
				strings.Join(tc.args, " "), code, out, errOut, tc.code, tc.says)
		}
		for _, name := range []string{"d", "b.db"} {
			if _, err := os.Stat(name); err == nil {
				t.Errorf("mailroom %s left %s behind", strings.Join(tc.args, " "), name)
				os.RemoveAll(name)
			}
		}
	}
}

// A backup from before the secret-key verifier (migration 00024) restores:
// it is migrated forward, restore says it could not check the key, and a
// second restore into the same directory keeps the store it replaces.
func TestRestoreMigratesAnOlderBackup(t *testing.T) {
	t.Chdir(t.TempDir())
	if code, _, errOut := runCLI("accounts", "create", "acme", "--data-dir", "src"); code != 0 {
		t.Fatalf("accounts create: %d %s", code, errOut)
	}
	if code, out, errOut := runCLI("backup", "--data-dir", "src", "--out", "old.db"); code != 0 || !strings.Contains(out, "Backed up SQLite at src/mailroom.db to old.db") {
		t.Fatalf("backup: %d %s %s", code, out, errOut)
	}
	// Make it a backup from before migration 00024: undo it and every
	// later one (a migration added after 00028 adds its undoing here).
	db, err := sql.Open("sqlite", "file:old.db")
	if err != nil {
		t.Fatal(err)
	}
	for _, stmt := range []string{
		"DROP TABLE secret_verifier",                // 00024
		"ALTER TABLE domains DROP COLUMN dkim_keys", // 00025
		"ALTER TABLE domains DROP COLUMN checks",    // 00026
		"DROP TABLE received_attachments",           // 00027
		"DROP TABLE received_messages",
		"DROP INDEX domains_receiving",
		"ALTER TABLE domains DROP COLUMN receiving",
		"DROP TABLE message_links", // 00028
		"DROP INDEX messages_opened",
		"DROP INDEX messages_clicked",
		"ALTER TABLE messages DROP COLUMN opened",
		"ALTER TABLE messages DROP COLUMN clicked",
		"ALTER TABLE messages DROP COLUMN track_opens",
		"ALTER TABLE messages DROP COLUMN track_clicks",
		"ALTER TABLE recipients DROP COLUMN opens",
		"ALTER TABLE recipients DROP COLUMN clicks",
		"ALTER TABLE recipients DROP COLUMN reader_opens",
		"ALTER TABLE domains DROP COLUMN open_tracking",
		"ALTER TABLE domains DROP COLUMN click_tracking",
		"DELETE FROM goose_db_version WHERE version_id >= 24",
	} {
		if _, err := db.Exec(stmt); err != nil {
			t.Fatal(err)
		}
	}
	db.Close()
	if err := os.MkdirAll("dst", 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join("dst", "secret.key"), []byte(base64.StdEncoding.EncodeToString(make([]byte, 32))), 0o600); err != nil {
		t.Fatal(err)
	}
	code, out, errOut := runCLI("restore", "--from", "old.db", "--data-dir", "dst")
	if code != 0 || !strings.Contains(out, "applied migrations 24") || !strings.Contains(out, "holds no verifier") {
		t.Fatalf("restore: exit %d\n%s%s", code, out, errOut)
	}
	if code, out, errOut := runCLI("accounts", "list", "--data-dir", "dst"); code != 0 || !strings.Contains(out, "acme") {
		t.Fatalf("the restored store: %d %s %s", code, out, errOut)
	}
	code, out, errOut = runCLI("restore", "--from", "old.db", "--data-dir", "dst")
	if code != 0 || !strings.Contains(out, "The store that was there is kept as dst/mailroom.db.before-restore-") {
		t.Fatalf("second restore: exit %d\n%s%s", code, out, errOut)
	}
	entries, _ := os.ReadDir("dst")
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	for _, n := range names {
		if strings.Contains(n, ".restore-") || strings.HasSuffix(n, ".migrate.lock") && strings.Contains(n, "restore") {
			t.Errorf("restore left its working copy %s behind (dst holds %v)", n, names)
		}
	}
}

// A backup is never written into the data directory, by any name or link:
// there it could replace the live store's file beside its write-ahead log
// (a corrupt store) or its secret key. The store is untouched after.
func TestBackupRefusesTheDataDirectory(t *testing.T) {
	t.Chdir(t.TempDir())
	if code, _, errOut := runCLI("accounts", "create", "acme", "--data-dir", "src"); code != 0 {
		t.Fatalf("accounts create: %d %s", code, errOut)
	}
	key := base64.StdEncoding.EncodeToString(make([]byte, 32))
	if err := os.WriteFile(filepath.Join("src", "secret.key"), []byte(key), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join("src", "sub"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("src", "link"); err != nil {
		t.Fatal(err)
	}
	for _, out := range []string{"src/mailroom.db", "src/secret.key", "src/sub/b.db", "link/b.db", "src/../src/b.db"} {
		code, stdout, errOut := runCLI("backup", "--data-dir", "src", "--out", out)
		if code != 1 || stdout != "" || !strings.Contains(errOut, "the backup must go outside the data directory") {
			t.Errorf("backup --out %s: exit %d, stdout %q, stderr %q; want it refused", out, code, stdout, errOut)
		}
	}
	if now, err := os.ReadFile(filepath.Join("src", "secret.key")); err != nil || string(now) != string(key) {
		t.Errorf("the secret key changed: %v", err)
	}
	if code, out, errOut := runCLI("accounts", "list", "--data-dir", "src"); code != 0 || !strings.Contains(out, "acme") {
		t.Fatalf("the store after the refusals: %d %s %s", code, out, errOut)
	}
	if code, out, errOut := runCLI("backup", "--data-dir", "src", "--out", "b.db"); code != 0 || !strings.Contains(out, "Backed up") {
		t.Errorf("a backup beside the data directory: %d %s %s", code, out, errOut)
	}
}
