package e2e

import (
	"math"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mailroom/mailroom"
	"github.com/mailroom/mailroom/apitest"
	"github.com/mailroom/mailroom/poll"
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
		var r *apitest.Response
		if !poll.Within(time.Until(updated.Add(10*time.Second)), func() bool {
			r = list(acme)
			return r.Header.Get("RateLimit-Limit") == "5"
		}) {
			t.Fatalf("10 s after accounts update the node still says RateLimit-Limit %q", r.Header.Get("RateLimit-Limit"))
		}
		t.Logf("applied %v after the update", time.Since(updated).Round(time.Millisecond))

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

// Two nodes sharing PostgreSQL (and so one secret key) hold an account to
// its limit as a whole: with requests spread over both, about the burst
// passes at once, not twice the burst.
func TestRateLimitAcrossTwoNodes(t *testing.T) {
	dbURL := postgresOrSkip(t)
	work := t.TempDir()
	acme := printedKey.FindString(cli(t, work, nil, "accounts", "create", "acme", "--database-url", dbURL))
	cli(t, work, nil, "accounts", "update", "acme", "--rate", "2", "--burst", "10", "--database-url", dbURL)

	var a, b *server
	var wg sync.WaitGroup
	shared := []string{"--database-url", dbURL, "--secret-key", secretKeyOf(1)}
	wg.Go(func() { a = startServer(t, filepath.Join(work, "a"), shared...) })
	wg.Go(func() { b = startServer(t, filepath.Join(work, "b"), shared...) })
	wg.Wait()
	if t.Failed() {
		return
	}
	// Each node learns of the other from the heartbeats; watch the metrics,
	// not the API, so the buckets stay full.
	var page string
	if !poll.Within(30*time.Second, func() bool {
		for _, s := range []*server{a, b} {
			if page = s.metrics(t); !strings.Contains(page, "\nmailroom_rate_limit_nodes 2\n") {
				return false
			}
		}
		return true
	}) {
		t.Fatalf("a node never counted two nodes:\n%s", grepLines(page, "mailroom_rate_limit"))
	}

	list := apitest.Request{Method: "GET", Path: "/v1/api-keys", Key: acme}
	start := time.Now()
	first := a.client.Do(list)
	if first.Status != 200 || first.Header.Get("RateLimit-Limit") != "10" || first.Header.Get("RateLimit-Remaining") != "8" {
		t.Fatalf("first request: %d, RateLimit-Limit %q, RateLimit-Remaining %q; want 10 and 8 (4 left of node a's 5, for 2 nodes)",
			first.Status, first.Header.Get("RateLimit-Limit"), first.Header.Get("RateLimit-Remaining"))
	}
	passed := 1
	for i := range 29 {
		node := b
		if i%2 == 1 {
			node = a
		}
		if r := node.client.Do(list); r.Status == 200 {
			passed++
		} else if r.Code() != mailroom.ECodeRateLimited {
			t.Fatalf("%d %s", r.Status, r.Body)
		}
	}
	// The burst, and what 2/s refilled meanwhile (20 % over, for rounding).
	elapsed := time.Since(start).Seconds()
	most := 10 + int(math.Ceil(2*elapsed*1.2))
	if passed < 10 || passed > most {
		t.Fatalf("%d of 30 requests passed in %.1f s over two nodes; want 10 to %d for the account as a whole", passed, elapsed, most)
	}
}
