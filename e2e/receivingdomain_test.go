package e2e

import (
	"encoding/json"
	"path/filepath"
	"testing"

	"github.com/mailroom/mailroom/apitest"
	"github.com/mailroom/mailroom/client/api"
	"github.com/mailroom/mailroom/dns/dnstest"
	"github.com/mailroom/mailroom/storetest"
)

// A customer turns receiving on for a verified domain (docs/api.md
// "Receiving mail"): the domain shows the MX to publish, pointing at
// --mx-host; until it is published the domain keeps sending (the check
// fails the MX alone), and once it is, a check verifies it. Turning it off
// removes the record; each change is in the audit log, and email.received
// is an event type the events and webhooks take.
func TestReceivingDomainThroughDNS(t *testing.T) {
	storetest.Each(t, func(t *testing.T, eng storetest.Engine) {
		world := dnstest.Start(t)
		world.SetA("mail.operator.test", "192.0.2.25")
		world.SetA("hooks.example", "93.184.215.14")
		work := t.TempDir()
		dataDir := filepath.Join(work, "data")
		storage := append([]string{"--data-dir", dataDir}, eng.Storage(t)...)
		s := startServer(t, dataDir, append(storage, "--dns-server", world.Addr(), "--hostname", "mail.operator.test",
			"--mx-host", "mx.operator.test")...)
		key := printedKey.FindString(cli(t, work, nil, append([]string{"accounts", "create", "acme"}, storage...)...))

		domain := func(r *apitest.Response) api.Domain {
			t.Helper()
			var d api.Domain
			if err := json.Unmarshal(r.Body, &d); err != nil {
				t.Fatalf("%v: %s", err, r.Body)
			}
			return d
		}
		receivingMX := func(d api.Domain) *api.DNSRecord {
			for i := range d.Records {
				if d.Records[i].Purpose == api.PurposeReceiving {
					return &d.Records[i]
				}
			}
			return nil
		}
		r := s.client.Do(apitest.Request{Method: "POST", Path: "/v1/domains", Key: key, Body: map[string]string{"name": "shop.example"}})
		if r.Status != 201 || domain(r).Receiving || receivingMX(domain(r)) != nil {
			t.Fatalf("add: %d %s", r.Status, r.Body)
		}
		for _, rec := range domain(r).Records {
			if rec.Type == "MX" {
				world.SetMX(rec.Name, uint16(*rec.Priority), rec.Value)
			} else {
				world.SetTXT(rec.Name, rec.Value)
			}
		}
		if r = s.client.Do(apitest.Request{Method: "POST", Path: "/v1/domains/shop.example/verify", Key: key}); r.Status != 200 || r.Str("status") != "verified" {
			t.Fatalf("verify: %d %s", r.Status, r.Body)
		}

		r = s.client.Do(apitest.Request{Method: "PATCH", Path: "/v1/domains/shop.example", Key: key, Body: map[string]any{"receiving": true}})
		d := domain(r)
		mx := receivingMX(d)
		if r.Status != 200 || !d.Receiving || mx == nil {
			t.Fatalf("turn on: %d %s", r.Status, r.Body)
		}
		if mx.Type != "MX" || mx.Name != "shop.example" || mx.Value != "mx.operator.test" || mx.Priority == nil || *mx.Priority != 10 ||
			!mx.Required || mx.Status != api.RecordPending {
			t.Fatalf("the record to publish: %+v", mx)
		}

		// Not published yet: the MX fails, the domain still sends.
		r = s.client.Do(apitest.Request{Method: "POST", Path: "/v1/domains/shop.example/verify", Key: key})
		if d = domain(r); r.Status != 200 || d.Status != api.DomainVerified || receivingMX(d).Status != api.RecordFailed {
			t.Fatalf("verify before publishing the MX: %d %s", r.Status, r.Body)
		}
		world.SetMX("shop.example", 10, "mx.operator.test")
		r = s.client.Do(apitest.Request{Method: "POST", Path: "/v1/domains/shop.example/verify", Key: key})
		if d = domain(r); r.Status != 200 || d.Status != api.DomainVerified || receivingMX(d).Status != api.RecordVerified {
			t.Fatalf("verify after publishing the MX: %d %s", r.Status, r.Body)
		}
		if r = s.client.Do(apitest.Request{Method: "GET", Path: "/v1/domains/shop.example", Key: key}); !domain(r).Receiving {
			t.Fatalf("read back: %s", r.Body)
		}

		r = s.client.Do(apitest.Request{Method: "PATCH", Path: "/v1/domains/shop.example", Key: key, Body: map[string]any{"receiving": "yes"}})
		if r.Status != 400 {
			t.Fatalf("receiving \"yes\": %d %s", r.Status, r.Body)
		}
		r = s.client.Do(apitest.Request{Method: "PATCH", Path: "/v1/domains/shop.example", Key: key, Body: map[string]any{"receiving": false}})
		if d = domain(r); r.Status != 200 || d.Receiving || receivingMX(d) != nil {
			t.Fatalf("turn off: %d %s", r.Status, r.Body)
		}

		r = s.client.Do(apitest.Request{Method: "GET", Path: "/v1/audit-log?action=domain.updated", Key: key})
		var log struct {
			Data []struct {
				Changes map[string][2]any `json:"changes"`
			} `json:"data"`
		}
		if err := json.Unmarshal(r.Body, &log); err != nil || r.Status != 200 || len(log.Data) != 2 {
			t.Fatalf("audit log: %d %s", r.Status, r.Body)
		}
		if c := log.Data[0].Changes["receiving"]; c != [2]any{true, false} {
			t.Fatalf("newest domain.updated changes %v, want receiving [true, false]", log.Data[0].Changes)
		}
		if c := log.Data[1].Changes["receiving"]; c != [2]any{false, true} {
			t.Fatalf("first domain.updated changes %v, want receiving [false, true]", log.Data[1].Changes)
		}

		if r = s.client.Do(apitest.Request{Method: "GET", Path: "/v1/events?type=email.received", Key: key}); r.Status != 200 {
			t.Fatalf("events of type email.received: %d %s", r.Status, r.Body)
		}
		r = s.client.Do(apitest.Request{Method: "POST", Path: "/v1/webhooks", Key: key,
			Body: map[string]any{"url": "https://hooks.example/in", "events": []string{"email.received"}}})
		if r.Status != 201 {
			t.Fatalf("a webhook of email.received: %d %s", r.Status, r.Body)
		}
	})
}
