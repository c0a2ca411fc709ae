package e2e

import (
	"encoding/json"
	"errors"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mailroom/mailroom"
	"github.com/mailroom/mailroom/apitest"
	"github.com/mailroom/mailroom/dns/dnstest"
	"github.com/mailroom/mailroom/storetest"
)

// A customer adds a domain, publishes exactly the records the API returned
// in a real DNS server, and the service (pointed at that server with
// --dns-server) verifies it.
func TestDomainVerificationThroughDNS(t *testing.T) {
	storetest.Each(t, func(t *testing.T, eng storetest.Engine) {
		world := dnstest.Start(t)
		world.SetA("mail.operator.test", "192.0.2.25")
		work := t.TempDir()
		dataDir := filepath.Join(work, "data")
		storage := append([]string{"--data-dir", dataDir}, eng.Storage(t)...)
		s := startServer(t, dataDir, append(storage, "--dns-server", world.Addr(), "--hostname", "mail.operator.test")...)
		key := printedKey.FindString(cli(t, work, nil, append([]string{"accounts", "create", "acme"}, storage...)...))

		r := s.client.Do(apitest.Request{Method: "POST", Path: "/v1/domains", Key: key, Body: map[string]string{"name": "shop.example"}})
		if r.Status != 201 {
			t.Fatalf("add: %d %s", r.Status, r.Body)
		}
		var d struct {
			Records []mailroom.DNSRecord `json:"records"`
		}
		if err := json.Unmarshal(r.Body, &d); err != nil {
			t.Fatal(err)
		}
		for _, rec := range d.Records {
			if rec.Type == "MX" {
				world.SetMX(rec.Name, uint16(*rec.Priority), rec.Value)
			} else {
				world.SetTXT(rec.Name, rec.Value)
			}
		}
		r = s.client.Do(apitest.Request{Method: "POST", Path: "/v1/domains/shop.example/verify", Key: key})
		if r.Status != 200 || r.Str("status") != "verified" {
			t.Fatalf("verify: %d %s", r.Status, r.Body)
		}
	})
}

// The operator assigns a domain an IP pool from the command line while the
// service runs, and the API shows it at once; --ip-pool "" clears it. A
// domain the account lacks, or a pool name no pool could have, is refused.
func TestDomainsUpdateIPPool(t *testing.T) {
	storetest.Each(t, func(t *testing.T, eng storetest.Engine) {
		work := t.TempDir()
		dataDir := filepath.Join(work, "data")
		storage := append([]string{"--data-dir", dataDir}, eng.Storage(t)...)
		s := startServer(t, dataDir, storage...)
		key := printedKey.FindString(cli(t, work, nil, append([]string{"accounts", "create", "acme"}, storage...)...))
		cli(t, work, nil, append([]string{"accounts", "create", "globex"}, storage...)...)
		if r := s.client.Do(apitest.Request{Method: "POST", Path: "/v1/domains", Key: key, Body: map[string]string{"name": "shop.example"}}); r.Status != 201 {
			t.Fatalf("add: %d %s", r.Status, r.Body)
		}
		pool := func() any {
			t.Helper()
			r := s.client.Do(apitest.Request{Method: "GET", Path: "/v1/domains/shop.example", Key: key})
			var d map[string]any
			if err := json.Unmarshal(r.Body, &d); r.Status != 200 || err != nil {
				t.Fatalf("get: %d %s", r.Status, r.Body)
			}
			p, ok := d["ipPool"]
			if !ok {
				t.Fatalf("the domain has no ipPool: %s", r.Body)
			}
			return p
		}
		if p := pool(); p != nil {
			t.Fatalf("a new domain's ipPool is %v, want null", p)
		}

		out := cli(t, work, nil, append([]string{"domains", "update", "Shop.Example", "--account", "acme", "--ip-pool", "bulk"}, storage...)...)
		if !strings.Contains(out, "Domain shop.example of account acme sends from the IP pool bulk.") || !strings.Contains(out, "within 10 s") {
			t.Fatalf("domains update printed:\n%s", out)
		}
		if p := pool(); p != "bulk" {
			t.Fatalf("after domains update, ipPool is %v, want bulk", p)
		}

		for _, c := range []struct {
			args []string
			exit int
			says string
		}{
			{[]string{"other.example", "--account", "acme", "--ip-pool", "x"}, 1, "no domain other.example in account acme"},
			{[]string{"shop.example", "--account", "globex", "--ip-pool", "x"}, 1, "no domain shop.example in account globex"},
			{[]string{"shop.example", "--account", "initech", "--ip-pool", "x"}, 1, "initech"},
			{[]string{"shop.example", "--account", "acme", "--ip-pool", "bulk/2"}, 2, "not a pool name"},
		} {
			args := append(append([]string{"domains", "update"}, c.args...), storage...)
			out, errOut, err := cliResult(work, nil, args...)
			var exit *exec.ExitError
			if !errors.As(err, &exit) || exit.ExitCode() != c.exit || out != "" || !strings.Contains(errOut, c.says) {
				t.Errorf("mailroom domains update %s: %v, want exit %d\nstdout: %s\nstderr: %s", strings.Join(c.args, " "), err, c.exit, out, errOut)
			}
		}
		if p := pool(); p != "bulk" {
			t.Fatalf("after refused updates, ipPool is %v, want bulk", p)
		}

		out = cli(t, work, nil, append([]string{"domains", "update", "shop.example", "--account", "acme", "--ip-pool", ""}, storage...)...)
		if !strings.Contains(out, "sends from the default pool") {
			t.Fatalf("domains update --ip-pool \"\" printed:\n%s", out)
		}
		if p := pool(); p != nil {
			t.Fatalf("cleared, ipPool is %v, want null", p)
		}

		// The domain's tls, which the API's PATCH sets too.
		tls := func() any {
			t.Helper()
			r := s.client.Do(apitest.Request{Method: "GET", Path: "/v1/domains/shop.example", Key: key})
			var d map[string]any
			if err := json.Unmarshal(r.Body, &d); r.Status != 200 || err != nil {
				t.Fatalf("get: %d %s", r.Status, r.Body)
			}
			return d["tls"]
		}
		if m := tls(); m != "opportunistic" {
			t.Fatalf("a new domain's tls is %v, want opportunistic", m)
		}
		out = cli(t, work, nil, append([]string{"domains", "update", "shop.example", "--account", "acme", "--tls", "enforced"}, storage...)...)
		if !strings.Contains(out, "Domain shop.example of account acme sends with tls enforced.") || strings.Contains(out, "pool") {
			t.Fatalf("domains update --tls enforced printed:\n%s", out)
		}
		if m, p := tls(), pool(); m != "enforced" || p != nil {
			t.Fatalf("after domains update --tls enforced, tls is %v and ipPool %v; want enforced and the pool kept", m, p)
		}
	})
}
