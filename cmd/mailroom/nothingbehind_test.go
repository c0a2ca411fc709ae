package main

import (
	"bytes"
	"context"
	"net"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/mailroom/mailroom/storetest"
)

// A command that fails on its arguments leaves nothing behind: serve
// checks its flags before it makes the data directory, and the commands
// about what a store holds make no store to find nothing in (an outside
// probe found ./mailroom-data made by each of these).
func TestRefusedCommandLeavesNothingBehind(t *testing.T) {
	t.Chdir(t.TempDir())
	for _, tc := range []struct {
		args []string
		code int
		says string
	}{
		{[]string{"serve", "--listen", "nonsense"}, 2, `--listen "nonsense" is not HOST:PORT`},
		{[]string{"serve", "--listen", "nonsense", "--data-dir", "d"}, 2, `--listen "nonsense" is not HOST:PORT`},
		{[]string{"serve", "--metrics-listen", "127.0.0.1"}, 2, `--metrics-listen "127.0.0.1" is not HOST:PORT`},
		{[]string{"serve", "--submission-listen", ":99999"}, 2, `--submission-listen ":99999" is not HOST:PORT`},
		{[]string{"serve", "--retention", "1h"}, 2, "--retention must be at least 24h"},
		{[]string{"serve", "--retention", "1h", "--data-dir", "d"}, 2, "--retention must be at least 24h"},
		{[]string{"serve", "--audit-retention", "1h"}, 2, "--audit-retention must be at least 24h"},
		{[]string{"serve", "--max-webhooks", "0"}, 2, "--max-webhooks must be at least 1"},
		{[]string{"serve", "--sending-ips", "nope"}, 2, `--sending-ips: "nope" is not an IP address`},
		{[]string{"serve", "--secret-key", "abc"}, 2, "--secret-key: "},
		{[]string{"keys", "create", "--account", "nope", "--scopes", "send"}, 1, "no store at ./mailroom-data"},
		{[]string{"keys", "list", "--account", "nope"}, 1, "no store at ./mailroom-data"},
		{[]string{"keys", "list", "--account", "nope", "--data-dir", "d"}, 1, "no store at d"},
		{[]string{"keys", "revoke", "abcdefghijklmnop"}, 1, "no store at ./mailroom-data"},
		{[]string{"accounts", "list"}, 1, "no store at ./mailroom-data"},
		{[]string{"accounts", "update", "nope", "--rate", "5"}, 1, "no store at ./mailroom-data"},
	} {
		code, out, errOut := runCLI(tc.args...)
		if code != tc.code || out != "" || !strings.Contains(errOut, tc.says) {
			t.Errorf("mailroom %s: exit %d, stdout %q, stderr:\n%s\nwant exit %d saying %q",
				strings.Join(tc.args, " "), code, out, errOut, tc.code, tc.says)
		}
		if entries, _ := os.ReadDir("."); len(entries) != 0 {
			t.Errorf("mailroom %s left %v behind", strings.Join(tc.args, " "), entries)
			for _, e := range entries {
				os.RemoveAll(e.Name())
			}
		}
	}

	// accounts create is a first run's first step: it makes the store, and
	// the commands about what it holds then find it.
	if code, _, errOut := runCLI("accounts", "create", "acme"); code != 0 {
		t.Fatalf("accounts create: exit %d: %s", code, errOut)
	}
	if code, _, errOut := runCLI("keys", "list", "--account", "nope"); code != 1 || !strings.Contains(errOut, `No account "nope"`) {
		t.Errorf("keys list --account nope on a store: exit %d: %s", code, errOut)
	}
	if code, out, errOut := runCLI("keys", "list", "--account", "acme"); code != 0 || !strings.Contains(out, "default") {
		t.Errorf("keys list --account acme: exit %d: %s%s", code, out, errOut)
	}
}

// On PostgreSQL the database exists before Mailroom does: an unknown
// account is reported as such.
func TestUnknownAccountOnPostgres(t *testing.T) {
	url := storetest.NewPostgresDatabase(t)
	for _, args := range [][]string{
		{"keys", "create", "--account", "nope", "--scopes", "send", "--database-url", url},
		{"keys", "list", "--account", "nope", "--database-url", url},
	} {
		if code, out, errOut := runCLI(args...); code != 1 || out != "" || !strings.Contains(errOut, `No account "nope"`) {
			t.Errorf("mailroom %s: exit %d, stdout %q, stderr:\n%s", strings.Join(args[:3], " "), code, out, errOut)
		}
	}
}

// migrate says what it applied, and that there was nothing to apply when
// there was not (it said "up to date" either way), on both engines.
func TestMigrateSaysWhatItApplied(t *testing.T) {
	engines := map[string][]string{"sqlite": {"--data-dir", t.TempDir()}}
	if os.Getenv(storetest.EnvDatabaseURL) != "" {
		engines["postgres"] = []string{"--database-url", storetest.NewPostgresDatabase(t)}
	} else {
		t.Log("PostgreSQL half skipped: " + storetest.EnvDatabaseURL + " is not set")
	}
	for name, flags := range engines {
		t.Run(name, func(t *testing.T) {
			code, out, errOut := runCLI(append([]string{"migrate"}, flags...)...)
			if code != 0 || !strings.HasPrefix(out, "Applied migrations 1–") || !strings.Contains(out, "28 (") {
				t.Errorf("first migrate: exit %d, stdout %q, stderr:\n%s", code, out, errOut)
			}
			code, out, errOut = runCLI(append([]string{"migrate"}, flags...)...)
			if code != 0 || !strings.HasPrefix(out, "Storage is up to date, nothing to apply") {
				t.Errorf("second migrate: exit %d, stdout %q, stderr:\n%s", code, out, errOut)
			}
		})
	}
}

func TestVersionRanges(t *testing.T) {
	for _, tc := range []struct {
		in   []int64
		want string
	}{
		{nil, ""}, {[]int64{7}, "7"}, {[]int64{1, 2, 3}, "1–3"},
		{[]int64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 14, 15, 16}, "1–12, 14–16"}, {[]int64{3, 5, 6}, "3, 5–6"},
	} {
		if got := versionRanges(tc.in); got != tc.want {
			t.Errorf("versionRanges(%v) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

// When the metrics listener's address is taken (its default, 9090, is
// Prometheus's own port), serve fails naming --metrics-listen and how to
// turn it off, rather than only the address.
func TestMetricsListenInUseNamesTheFlag(t *testing.T) {
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer taken.Close()
	// A deadline, so that a serve that starts fails the test rather than
	// run on.
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	var stdout, stderr bytes.Buffer
	code := run(ctx, []string{"serve", "--dev", "--listen", "127.0.0.1:0", "--data-dir", t.TempDir(),
		"--metrics-listen", taken.Addr().String()}, &stdout, &stderr)
	if code != 1 || !strings.Contains(stderr.String(), "--metrics-listen "+taken.Addr().String()) ||
		!strings.Contains(stderr.String(), "--metrics-listen ''") {
		t.Errorf("exit %d, stderr:\n%s", code, stderr.String())
	}
}
