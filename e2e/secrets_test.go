package e2e

import (
	"io"
	"net/http"
	"net/url"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mailroom/mailroom/poll"
	"github.com/mailroom/mailroom/storetest"
)

// A node started with its secrets on the command line, as the attacker's
// probe found one, shows none of them on its metrics listener (which
// remote scraping needs reachable) nor in its output: /debug/pprof/cmdline
// and /debug/vars answer 404, the relay's password is masked in the
// banner, and the database URL is never printed.
func TestSecretsStayOffTheMetricsListener(t *testing.T) {
	storetest.Each(t, func(t *testing.T, eng storetest.Engine) {
		const (
			secretKey     = "c2VjcmV0LWtleS1vZi10aGlydHktdHdvLWJ5dGVzISE="
			relayPassword = "relay-Pa55-hunter2"
			dbPassword    = "db-Pa55-hunter2"
		)
		flags := []string{"--secret-key", secretKey, "--hostname", "mail.example.net",
			"--delivery", "relay", "--relay-url", "smtp://mailroom:" + relayPassword + "@127.0.0.1:1"}
		if storage := eng.Storage(t); len(storage) == 2 {
			// A password the database, trusting loopback, ignores.
			u, err := url.Parse(storage[1])
			if err != nil {
				t.Fatal(err)
			}
			u.User = url.UserPassword(u.User.Username(), dbPassword)
			flags = append(flags, "--database-url", u.String())
		}
		s := startServer(t, filepath.Join(t.TempDir(), "data"), flags...)
		var m []string
		if !poll.Within(10*time.Second, func() bool { m = metricsLine.FindStringSubmatch(s.Stderr()); return m != nil }) {
			t.Fatalf("no metrics address in the log:\n%s", s.Stderr())
		}
		metrics := "http://" + m[1] + m[2]
		for path, want := range map[string]int{"/debug/pprof/cmdline": 404, "/debug/vars": 404, "/debug/pprof/heap": 200, "/metrics": 200} {
			resp, err := http.Get(metrics + path)
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != want {
				t.Errorf("GET %s: %d, want %d", path, resp.StatusCode, want)
			}
			for _, secret := range []string{secretKey, relayPassword, dbPassword} {
				if strings.Contains(string(body), secret) {
					t.Errorf("GET %s shows a secret of the command line", path)
				}
			}
		}
		if err := s.stop(syscall.SIGTERM); err != nil {
			t.Errorf("serve: %v", err)
		}
		out := s.Stdout() + s.Stderr()
		for _, secret := range []string{secretKey, relayPassword, dbPassword} {
			if strings.Contains(out, secret) {
				t.Errorf("serve's output shows %q:\n%s", secret, out)
			}
		}
		if !strings.Contains(s.Stdout(), "relay through smtp://mailroom:xxxxx@127.0.0.1:1") {
			t.Errorf("the banner does not name the relay, masked:\n%s", s.Stdout())
		}
	})
}
