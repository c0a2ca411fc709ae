package e2e

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/mailroom/mailroom"
	"github.com/mailroom/mailroom/apitest"
	"github.com/mailroom/mailroom/dns/dnstest"
	"github.com/mailroom/mailroom/storetest"
)

// A customer publishes every required record but no DMARC, from a node
// whose sending address has no PTR and is listed on the operator's test
// blocklist: POST verify answers the domain verified, with checks that say
// so and what to add; they are stored (a GET after a restart of the node
// shows them) and the dashboard's domain page shows them.
func TestDomainHealthThroughTheBinary(t *testing.T) {
	storetest.Each(t, func(t *testing.T, eng storetest.Engine) {
		world := dnstest.Start(t)
		world.SetA("mail.operator.test", "192.0.2.25")
		world.SetA("25.2.0.192.bl.dnsbl.test", "127.0.0.2")
		work := t.TempDir()
		dataDir := filepath.Join(work, "data")
		storage := append([]string{"--data-dir", dataDir}, eng.Storage(t)...)
		flags := append(storage, "--dns-server", world.Addr(), "--hostname", "mail.operator.test",
			"--dnsbl", "clean.dnsbl.test,bl.dnsbl.test")
		s := startServer(t, dataDir, flags...)
		key := printedKey.FindString(cli(t, work, nil, append([]string{"accounts", "create", "acme"}, storage...)...))

		r := s.client.Do(apitest.Request{Method: "POST", Path: "/v1/domains", Key: key, Body: map[string]string{"name": "shop.example"}})
		if r.Status != 201 {
			t.Fatalf("add: %d %s", r.Status, r.Body)
		}
		var d struct {
			Records []mailroom.DNSRecord   `json:"records"`
			Checks  []mailroom.HealthCheck `json:"checks"`
		}
		if err := json.Unmarshal(r.Body, &d); err != nil {
			t.Fatal(err)
		}
		if d.Checks == nil || len(d.Checks) != 0 {
			t.Fatalf("a new domain's checks: %s, want []", r.Body)
		}
		for _, rec := range d.Records {
			switch {
			case rec.Purpose == mailroom.PurposeDMARC:
			case rec.Type == "MX":
				world.SetMX(rec.Name, uint16(*rec.Priority), rec.Value)
			default:
				world.SetTXT(rec.Name, rec.Value)
			}
		}
		r = s.client.Do(apitest.Request{Method: "POST", Path: "/v1/domains/shop.example/verify", Key: key})
		if r.Status != 200 || r.Str("status") != "verified" {
			t.Fatalf("verify: %d %s", r.Status, r.Body)
		}
		wantChecks := func(body []byte) {
			t.Helper()
			var got struct {
				Checks []mailroom.HealthCheck `json:"checks"`
			}
			if err := json.Unmarshal(body, &got); err != nil {
				t.Fatal(err)
			}
			byName := map[mailroom.HealthCheckName]mailroom.HealthCheck{}
			var names []string
			for _, c := range got.Checks {
				byName[c.Name] = c
				names = append(names, string(c.Name))
			}
			if strings.Join(names, " ") != "dmarc spf_covers_sending_addresses fcrdns return_path_mx mta_sts tls_rpt dnsbl" {
				t.Fatalf("checks in the order %v", names)
			}
			for name, want := range map[mailroom.HealthCheckName]struct {
				status mailroom.HealthStatus
				says   []string
			}{
				mailroom.HealthDMARC:            {mailroom.HealthWarn, []string{"No DMARC record", `TXT _dmarc.shop.example "v=DMARC1; p=none;"`}},
				mailroom.HealthSPFCoversSending: {mailroom.HealthPass, []string{"192.0.2.25"}},
				mailroom.HealthFCrDNS:           {mailroom.HealthFail, []string{"192.0.2.25 has no PTR record", "mail.operator.test"}},
				mailroom.HealthReturnPathMX:     {mailroom.HealthPass, nil},
				mailroom.HealthMTASTS:           {mailroom.HealthWarn, []string{"_mta-sts.shop.example"}},
				mailroom.HealthDNSBL:            {mailroom.HealthFail, []string{"192.0.2.25 is listed on bl.dnsbl.test with 127.0.0.2"}},
			} {
				c := byName[name]
				if c.Status != want.status {
					t.Errorf("%s: %s (%s), want %s", name, c.Status, c.Detail, want.status)
				}
				for _, s := range want.says {
					if !strings.Contains(c.Detail, s) {
						t.Errorf("%s's detail %q does not say %q", name, c.Detail, s)
					}
				}
			}
		}
		wantChecks(r.Body)

		// Stored: another node start reads them back without a check.
		_ = s.stop(syscall.SIGTERM)
		world.SetTXT("_dmarc.shop.example", "v=DMARC1; p=reject")
		s = startServer(t, dataDir, flags...)
		r = s.client.Do(apitest.Request{Method: "GET", Path: "/v1/domains/shop.example", Key: key})
		if r.Status != 200 {
			t.Fatalf("get: %d %s", r.Status, r.Body)
		}
		wantChecks(r.Body)

		if eng.Name != "sqlite" {
			return
		}
		browserOrSkip(t)
		b := newBrowser(t, s)
		b.navigate("/")
		b.signIn(key)
		b.waitLoaded(mainNav)
		b.step("the domain's health checks")
		b.navigate("/domains/shop.example")
		b.waitLoaded("#health .health-check")
		if n := b.count("#health .health-check"); n != 7 {
			b.errorf("the page shows %d checks, want 7", n)
		}
		if got := b.text(`#health [data-check="dnsbl"]`); !strings.Contains(got, "fail") || !strings.Contains(got, "bl.dnsbl.test") {
			b.errorf("the dnsbl check reads %q, want it failing on bl.dnsbl.test", got)
		}
		if got := b.text(`#health [data-check="dmarc"]`); !strings.Contains(got, "_dmarc.shop.example") {
			b.errorf("the dmarc check reads %q, want the record to add", got)
		}
		b.screenshot("domain-health")
		if errs := b.ConsoleErrors(); len(errs) > 0 {
			t.Errorf("the domain page logged console errors:\n%s", fmtEntries(errs))
		}
	})
}
