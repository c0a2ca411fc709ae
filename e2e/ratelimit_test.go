package e2e

import (
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mailroom/mailroom"
	"github.com/mailroom/mailroom/apitest"
	"github.com/mailroom/mailroom/storetest"
)

// The operator lowers an account's rate with `mailroom accounts update`
// while the service runs: within 10 s the account is held to it (429
// rate_limited with Retry-After), and other accounts are not.
func TestRateLimitUpdateWhileServing(t *testing.T) {
	storetest.Each(t, func(t *testing.T, eng storetest.Engine) {
		work := t.TempDir()
		dataDir := filepath.Join(work, "data")
		storage := append([]string{"--data-dir", dataDir}, eng.Storage(t)...)
		s := startServer(t, dataDir, storage...)
		acme := printedKey.FindString(cli(t, work, nil, append([]string{"accounts", "create", "acme"}, storage...)...))
		globex := printedKey.FindString(cli(t, work, nil, append([]string{"accounts", "create", "globex"}, storage...)...))
		list := func(key string) *apitest.Response {
			return s.client.Do(apitest.Request{Method: "GET", Path: "/v1/api-keys", Key: key})
		}

		if r := list(acme); r.Status != 200 || r.Header.Get("RateLimit-Limit") != strconv.Itoa(mailroom.DefaultBurst) {
			t.Fatalf("before any update: %d, RateLimit-Limit %q; want 200 on the default burst", r.Status, r.Header.Get("RateLimit-Limit"))
		}

		// Mistakes are refused and change nothing.
		for _, bad := range [][]string{{"acme", "--rate", "0"}, {"acme", "--burst", "0"}, {"acme", "--rate", "NaN"}, {"acme"}, {"nobody", "--rate", "5"}} {
			if out, errOut, err := cliResult(work, nil, append(append([]string{"accounts", "update"}, bad...), storage...)...); err == nil {
				t.Fatalf("accounts update %v succeeded: %s", bad, out)
			} else if errOut == "" {
				t.Fatalf("accounts update %v failed without saying why", bad)
			}
		}

		out := cli(t, work, nil, append([]string{"accounts", "update", "acme", "--rate", "2", "--burst", "5"}, storage...)...)
		updated := time.Now()
		if !strings.Contains(out, "rate 2 requests/s, burst 5") {
			t.Fatalf("accounts update printed:\n%s", out)
		}
		listed := cli(t, work, nil, append([]string{"accounts", "list"}, storage...)...)
		if !regexp.MustCompile(`acme\s+2\s+5\s`).MatchString(listed) ||
			!regexp.MustCompile(`globex\s+100 \(default\)\s+200 \(default\)\s`).MatchString(listed) {
			t.Fatalf("accounts list:\n%s", listed)
		}
		// One flag alone keeps the other part.
		out = cli(t, work, nil, append([]string{"accounts", "update", "acme", "--rate", "3"}, storage...)...)
		if !strings.Contains(out, "rate 3 requests/s, burst 5") {
			t.Fatalf("--rate alone:\n%s", out)
		}
		cli(t, work, nil, append([]string{"accounts", "update", "acme", "--rate", "2"}, storage...)...)

		// The running node applies it within 10 s.
		for {
			r := list(acme)
			if r.Header.Get("RateLimit-Limit") == "5" {
				t.Logf("applied %v after the update", time.Since(updated).Round(time.Millisecond))
				break
			}
			if time.Since(updated) > 10*time.Second {
				t.Fatalf("10 s after accounts update the node still says RateLimit-Limit %q", r.Header.Get("RateLimit-Limit"))
			}
			time.Sleep(100 * time.Millisecond)
		}

		// At most 5 at once, then 2 a second: a quick run of requests hits
		// the limit.
		var limited *apitest.Response
		for range 20 {
			if r := list(acme); r.Status == 429 {
				limited = r
				break
			}
		}
		if limited == nil {
			t.Fatal("20 quick requests on a 2/s limit with a burst of 5 all passed")
		}
		if limited.Code() != mailroom.ECodeRateLimited || limited.Header.Get("RateLimit-Remaining") != "0" {
			t.Fatalf("over the limit: %d %s %v", limited.Status, limited.Body, limited.Header)
		}
		if n, err := strconv.Atoi(limited.Header.Get("Retry-After")); err != nil || n < 1 {
			t.Fatalf("Retry-After %q, want whole seconds, at least 1", limited.Header.Get("Retry-After"))
		}

		if r := list(globex); r.Status != 200 || r.Header.Get("RateLimit-Limit") != strconv.Itoa(mailroom.DefaultBurst) {
			t.Fatalf("globex was held to acme's limit: %d %v", r.Status, r.Header)
		}
		if m := grepLines(s.metrics(t), "mailroom_rate_limited_total{"); !strings.Contains(m, `account="acct_`) {
			t.Fatalf("no 429 counted by account in the metrics:\n%s", m)
		}
	})
}
