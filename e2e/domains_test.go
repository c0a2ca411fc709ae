package e2e

import (
	"encoding/json"
	"path/filepath"
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
