package domain_test

import (
	"context"
	"testing"
	"time"

	"github.com/mailroom/mailroom"
	"github.com/mailroom/mailroom/dns"
	"github.com/mailroom/mailroom/domain"
	"github.com/mailroom/mailroom/storetest"
)

// Verify refreshes a domain's checks with its records and stores them; a
// failing check (a DNSBL listing, no DMARC) is advice and leaves the
// domain verified.
func TestVerifyStoresHealthChecks(t *testing.T) {
	storetest.Each(t, func(t *testing.T, eng storetest.Engine) {
		ctx := context.Background()
		store := eng.Open(t)
		acct := storetest.NewAccount(t, store, "acme")
		w := newHealthWorld(t)
		w.health.DNSBLZones = []string{"bl.dnsbl.test"}
		w.dns.SetA("10.2.0.192.bl.dnsbl.test", "127.0.0.2")
		w.dns.Remove("_dmarc." + custName)

		now := time.Date(2026, 11, 29, 10, 0, 0, 0, time.UTC)
		settings := mailroom.RecordSettings{SPFInclude: "ip4:" + sendIP, MXHost: mtaHost}
		svc := &domain.Service{
			Store: store, Sealer: nopSealer{}, Settings: settings, Health: w.health,
			Checker: &dns.Checker{Resolver: w.health.Resolver, SendingHost: mtaHost, MXHost: mtaHost},
			Now:     func() time.Time { return now },
		}
		d, err := svc.Add(ctx, acct.ID, custName)
		if err != nil {
			t.Fatal(err)
		}
		if len(d.Checks) != 0 {
			t.Fatalf("a new domain has checks %+v", d.Checks)
		}
		for _, r := range d.Records {
			switch r.Type {
			case "TXT":
				if r.Purpose != mailroom.PurposeSPF && r.Purpose != mailroom.PurposeDMARC {
					w.dns.SetTXT(r.Name, r.Value)
				}
			}
		}
		if _, err := svc.Verify(ctx, acct.ID, custName); err != nil {
			t.Fatal(err)
		}
		got := storetest.Try(store.Domain(ctx, acct.ID, custName)).Must(t)
		if got.Status != mailroom.DomainVerified {
			t.Fatalf("status %s (records %+v), want verified: the checks are advice", got.Status, got.Records)
		}
		byName := map[mailroom.HealthCheckName]mailroom.HealthCheck{}
		for _, c := range got.Checks {
			byName[c.Name] = c
		}
		if len(got.Checks) != len(mailroom.HealthCheckNames) {
			t.Fatalf("stored %d checks, want %d: %+v", len(got.Checks), len(mailroom.HealthCheckNames), got.Checks)
		}
		want(t, byName, mailroom.HealthDMARC, mailroom.HealthWarn, "No DMARC record")
		want(t, byName, mailroom.HealthDNSBL, mailroom.HealthFail, "bl.dnsbl.test", "127.0.0.2")

		// The next check brings them up to date.
		w.dns.SetTXT("_dmarc."+custName, "v=DMARC1; p=reject")
		if _, err := svc.Verify(ctx, acct.ID, custName); err != nil {
			t.Fatal(err)
		}
		got = storetest.Try(store.Domain(ctx, acct.ID, custName)).Must(t)
		if got.Checks[0].Name != mailroom.HealthDMARC || got.Checks[0].Status != mailroom.HealthPass {
			t.Fatalf("after DMARC was published: %+v", got.Checks[0])
		}
	})
}

// nopSealer keeps the DKIM key as it is: the test does not sign.
type nopSealer struct{}

func (nopSealer) Seal(p, _ []byte) []byte          { return p }
func (nopSealer) Open(s, _ []byte) ([]byte, error) { return s, nil }
