package e2e

import (
	"context"
	"net"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/emersion/go-msgauth/dkim"

	"github.com/mailroom/mailroom/apitest"
	"github.com/mailroom/mailroom/poll"
	"github.com/mailroom/mailroom/storetest"
)

// A backup taken while a SQLite node accepts and delivers a flood of mail
// restores into a working service: the key, the verified domain and the
// template are there, every message accepted before the backup began is in
// the log and reaches the receiver (what was still queued is delivered by
// the restored node), and the restored node signs and sends new mail with
// the store's DKIM key. Restore is refused while a node serves the
// directory, and with another secret key; the backup never holds the key.
func TestBackupUnderLoadRestores(t *testing.T) {
	w := newWorld(t)
	// A receiver slower than the flood: mail queues up while the backup runs.
	w.mx.SlowData(100 * time.Millisecond)
	node, key, _ := w.startAcmeNode(t, storetest.SQLite)
	work := filepath.Dir(node.dataDir)
	if r := node.client.Do(apitest.Request{Method: "POST", Path: "/v1/templates", Key: key, Body: map[string]any{
		"name": "receipt", "from": "orders@shop.example", "subject": "Receipt {{order}}", "text": "Order {{order}}."}}); r.Status != 201 {
		t.Fatalf("create template: %d %s", r.Status, r.Body)
	}

	f := startFlood(t, node.base, node, key)
	if !poll.Within(60*time.Second, func() bool { return f.count() >= 300 && len(w.mx.Messages()) >= 10 }) {
		f.end()
		t.Fatalf("the flood did not get going: %d accepted, %d received", f.count(), len(w.mx.Messages()))
	}
	f.mu.Lock()
	before := make(map[string]bool, len(f.accepted))
	for id := range f.accepted {
		before[id] = true
	}
	f.mu.Unlock()
	backup := filepath.Join(work, "backup", "mailroom.db")
	if err := os.Mkdir(filepath.Dir(backup), 0o700); err != nil {
		t.Fatal(err)
	}
	started := time.Now()
	out := cli(t, work, nil, "backup", "--data-dir", node.dataDir, "--out", backup)
	took := time.Since(started)
	duringBackup := f.count() - len(before)
	if !strings.Contains(out, "Backed up") || !strings.Contains(out, "secret key is not in it") {
		t.Errorf("backup said:\n%s", out)
	}
	keyFile, err := os.ReadFile(filepath.Join(node.dataDir, "secret.key"))
	if err != nil {
		t.Fatal(err)
	}
	if info, err := os.Stat(backup); err != nil || info.Mode().Perm() != 0o600 {
		t.Fatalf("backup file: %v, %v; want mode 0600", info, err)
	}
	if raw, err := os.ReadFile(backup); err != nil || strings.Contains(string(raw), strings.TrimSpace(string(keyFile))) {
		t.Fatalf("the backup holds the secret key (or cannot be read: %v)", err)
	}

	// Refused while a node serves the directory: nothing there changes.
	_, errOut, err := cliResult(work, nil, "restore", "--from", backup, "--data-dir", node.dataDir)
	if err == nil || !strings.Contains(errOut, "already using this data directory") || !strings.Contains(errOut, "stop it first") {
		t.Fatalf("restore onto a served directory: %v\n%s", err, errOut)
	}
	f.end()
	received := len(w.mx.Messages())
	if err := node.stop(syscall.SIGTERM); err != nil {
		t.Fatalf("stop: %v\n%s", err, node.Stderr())
	}

	// Refused with another key: the directory is left without a store.
	other := filepath.Join(work, "other")
	if err := os.Mkdir(other, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(other, "secret.key"), []byte(secretKeyOf(9)+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	_, errOut, err = cliResult(work, nil, "restore", "--from", backup, "--data-dir", other)
	if err == nil || !strings.Contains(errOut, "is not the one the backed-up store was started with") {
		t.Fatalf("restore with another key: %v\n%s", err, errOut)
	}
	if _, err := os.Stat(filepath.Join(other, "mailroom.db")); err == nil {
		t.Fatal("a refused restore left a store behind")
	}
	// Refused without any key: none is made.
	_, errOut, err = cliResult(work, nil, "restore", "--from", backup, "--data-dir", filepath.Join(work, "keyless"))
	if err == nil || !strings.Contains(errOut, "no secret key") {
		t.Fatalf("restore without a key: %v\n%s", err, errOut)
	}

	// Into a new directory holding the store's key.
	restored := filepath.Join(work, "restored")
	if err := os.Mkdir(restored, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(restored, "secret.key"), keyFile, 0o600); err != nil {
		t.Fatal(err)
	}
	out = cli(t, work, nil, "restore", "--from", backup, "--data-dir", restored)
	if !strings.Contains(out, "Restored") || !strings.Contains(out, "is the store's") {
		t.Errorf("restore said:\n%s", out)
	}
	again := startServer(t, restored, w.flags()...)
	if !poll.Within(30*time.Second, func() bool { return len(w.mx.Messages()) > received }) {
		t.Fatal("the restored node delivered nothing of what was queued")
	}
	for id := range before {
		if r := again.client.Do(apitest.Request{Method: "GET", Path: "/v1/messages/" + id, Key: key}); r.Status != 200 {
			t.Fatalf("message %s, accepted before the backup, is not in the restored log: %d", id, r.Status)
		}
	}
	w.waitAllArrived(t, before, 2*time.Minute, "of the restore")
	if r := again.client.Do(apitest.Request{Method: "GET", Path: "/v1/domains/shop.example", Key: key}); r.Str("status") != "verified" {
		t.Fatalf("the restored domain: %d %s", r.Status, r.Body)
	}
	r := again.client.Do(apitest.Request{Method: "POST", Path: "/v1/send", Key: key, Body: map[string]any{
		"to": "after-restore@example.net", "template": "receipt", "variables": map[string]any{"order": "42"}}})
	if r.Status != 200 {
		t.Fatalf("send with the restored template: %d %s", r.Status, r.Body)
	}
	var sent string
	poll.Within(time.Minute, func() bool {
		for _, m := range w.mx.Messages() {
			if len(m.Rcpts) == 1 && m.Rcpts[0] == "after-restore@example.net" {
				sent = string(m.Data)
			}
		}
		return sent != ""
	})
	if sent == "" {
		t.Fatal("the mail sent after the restore did not arrive")
	}
	// Signed with the DKIM key the backup holds sealed, and verifying
	// against the record published before the backup.
	verifications, err := dkim.VerifyWithOptions(strings.NewReader(sent), &dkim.VerifyOptions{LookupTXT: w.lookupTXT})
	if err != nil || len(verifications) == 0 || verifications[0].Err != nil || verifications[0].Domain != "shop.example" {
		t.Fatalf("the mail sent after the restore does not verify: %v %+v\n%s", err, verifications, sent)
	}
	t.Logf("%d accepted before the backup, %d while it ran (%v, the command's whole run), %d received before the restore",
		len(before), duringBackup, took.Round(time.Millisecond), received)
}

// lookupTXT asks the world's DNS server for name's TXT records, as a
// receiver verifying a DKIM signature does.
func (w *world) lookupTXT(name string) ([]string, error) {
	r := &net.Resolver{PreferGo: true, Dial: func(ctx context.Context, network, _ string) (net.Conn, error) {
		return (&net.Dialer{}).DialContext(ctx, network, w.dns.Addr())
	}}
	return r.LookupTXT(context.Background(), name)
}
