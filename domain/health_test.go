package domain_test

import (
	"context"
	"net/netip"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mailroom/mailroom"
	"github.com/mailroom/mailroom/dns"
	"github.com/mailroom/mailroom/dns/dnstest"
	"github.com/mailroom/mailroom/domain"
)

// healthWorld is a domain whose every record, and every record of the
// service, is published on a DNS server on loopback: each test breaks one
// thing and looks at what the checks say.
type healthWorld struct {
	dns    *dnstest.Server
	health *domain.Health
	d      *mailroom.Domain
}

const (
	sendIP   = "192.0.2.10"
	mtaHost  = "mta.mailroom.example"
	custName = "shop.example"
)

func newHealthWorld(t *testing.T) *healthWorld {
	t.Helper()
	srv := dnstest.Start(t)
	settings := mailroom.RecordSettings{SPFInclude: "ip4:" + sendIP, MXHost: mtaHost}
	d := &mailroom.Domain{Name: custName, DKIMSelector: "mr1", DKIMPublicKey: "MIIB", ReturnPathDomain: settings.ReturnPathDomain(custName)}
	d.Records = mailroom.BuildDomainRecords(d, settings)

	srv.SetTXT("_dmarc."+custName, "v=DMARC1; p=reject; rua=mailto:dmarc@shop.example")
	srv.SetTXT(d.ReturnPathDomain, settings.SPFRecordValue())
	srv.SetMX(d.ReturnPathDomain, 10, mtaHost)
	srv.SetA(mtaHost, sendIP)
	srv.SetPTR(sendIP, mtaHost)
	srv.SetTXT("_mta-sts."+custName, "v=STSv1; id=20261129")
	srv.SetTXT("_smtp._tls."+custName, "v=TLSRPTv1; rua=mailto:tls@shop.example")

	return &healthWorld{dns: srv, d: d, health: &domain.Health{
		Resolver: &dns.Resolver{Server: srv.Addr(), Timeout: 300 * time.Millisecond},
		Sending: domain.SendingAddresses{Pools: []mailroom.IPPool{
			{Name: "main", Addresses: []mailroom.SourceAddress{{IP: netip.MustParseAddr(sendIP), EHLOName: mtaHost}}},
		}},
		Hostname: mtaHost,
		MXHost:   mtaHost,
	}}
}

func (w *healthWorld) run(t *testing.T) map[mailroom.HealthCheckName]mailroom.HealthCheck {
	t.Helper()
	checks := w.health.Health(context.Background(), w.d)
	out := map[mailroom.HealthCheckName]mailroom.HealthCheck{}
	for _, c := range checks {
		out[c.Name] = c
	}
	return out
}

// want fails unless the check has status and its detail says each of says.
func want(t *testing.T, got map[mailroom.HealthCheckName]mailroom.HealthCheck, name mailroom.HealthCheckName, status mailroom.HealthStatus, says ...string) {
	t.Helper()
	c, ok := got[name]
	if !ok {
		t.Fatalf("no %s check among %v", name, got)
	}
	if c.Status != status {
		t.Errorf("%s: %s (%s), want %s", name, c.Status, c.Detail, status)
	}
	for _, s := range says {
		if !strings.Contains(c.Detail, s) {
			t.Errorf("%s's detail %q does not say %q", name, c.Detail, s)
		}
	}
}

// A domain with everything in place passes every check, listed in the
// documented order, and with no --dnsbl there is no dnsbl check.
func TestHealthAllPass(t *testing.T) {
	w := newHealthWorld(t)
	checks := w.health.Health(context.Background(), w.d)
	var names []mailroom.HealthCheckName
	for _, c := range checks {
		names = append(names, c.Name)
		if c.Status != mailroom.HealthPass {
			t.Errorf("%s: %s: %s", c.Name, c.Status, c.Detail)
		}
	}
	if wantNames := mailroom.HealthCheckNames[:6]; !slices.Equal(names, wantNames) {
		t.Fatalf("checks %v, want %v (no dnsbl without --dnsbl)", names, wantNames)
	}
}

// Without DMARC the check warns and gives the record to add; with p=none
// it passes with advice to tighten it; a record that does not parse fails.
func TestHealthDMARC(t *testing.T) {
	w := newHealthWorld(t)
	w.dns.Remove("_dmarc." + custName)
	want(t, w.run(t), mailroom.HealthDMARC, mailroom.HealthWarn, "No DMARC record", "TXT _dmarc.shop.example", "v=DMARC1; p=none;")

	w.dns.SetTXT("_dmarc."+custName, "v=DMARC1; p=none")
	want(t, w.run(t), mailroom.HealthDMARC, mailroom.HealthPass, "p=none", "p=quarantine")

	w.dns.SetTXT("_dmarc."+custName, "v=DMARC1; p=bogus")
	want(t, w.run(t), mailroom.HealthDMARC, mailroom.HealthFail, "does not parse")

	w.dns.SetTXT("_dmarc."+custName, "v=DMARC1; p=none", "v=DMARC1; p=reject")
	want(t, w.run(t), mailroom.HealthDMARC, mailroom.HealthFail, "2 DMARC records")

	// A subdomain inherits its parent's policy, as receivers look there.
	w.dns.SetTXT("_dmarc."+custName, "v=DMARC1; p=quarantine")
	w.d.Name = "news." + custName
	want(t, w.run(t), mailroom.HealthDMARC, mailroom.HealthPass, "p=quarantine at _dmarc.shop.example (inherited from shop.example)")
}

// An SPF record that does not allow one of the pool's addresses fails,
// naming the address and the record to publish; the required records
// alone (checked against --sending-ips) would not tell.
func TestHealthSPFNotCoveringAnAddress(t *testing.T) {
	w := newHealthWorld(t)
	w.health.Sending.Pools[0].Addresses = append(w.health.Sending.Pools[0].Addresses,
		mailroom.SourceAddress{IP: netip.MustParseAddr("198.51.100.20"), EHLOName: mtaHost})
	want(t, w.run(t), mailroom.HealthSPFCoversSending, mailroom.HealthFail,
		"198.51.100.20", "bounces.shop.example", "evaluates to fail", `"v=spf1 ip4:192.0.2.10 -all"`, "ip4:198.51.100.20")

	// The domain's own pool is the one that counts.
	w.health.Sending.Pools = append(w.health.Sending.Pools, mailroom.IPPool{Name: "clean",
		Addresses: []mailroom.SourceAddress{{IP: netip.MustParseAddr(sendIP), EHLOName: mtaHost}}})
	w.d.IPPool = "clean"
	want(t, w.run(t), mailroom.HealthSPFCoversSending, mailroom.HealthPass, sendIP)

	w.dns.Remove(w.d.ReturnPathDomain)
	want(t, w.run(t), mailroom.HealthSPFCoversSending, mailroom.HealthFail, "No SPF record at bounces.shop.example")
}

// An address whose PTR names a host that does not resolve back to it
// fails, naming the records to set; so does --hostname without them.
func TestHealthFCrDNSMismatch(t *testing.T) {
	w := newHealthWorld(t)
	w.dns.Remove(mtaHost)
	w.dns.SetA(mtaHost, "203.0.113.9")
	want(t, w.run(t), mailroom.HealthFCrDNS, mailroom.HealthFail,
		"PTR of 192.0.2.10 names mta.mailroom.example, which does not resolve to 192.0.2.10", "set the PTR record of 192.0.2.10 to mta.mailroom.example")

	w = newHealthWorld(t)
	w.dns.Remove("10.2.0.192.in-addr.arpa")
	want(t, w.run(t), mailroom.HealthFCrDNS, mailroom.HealthFail, "192.0.2.10 has no PTR record")

	// --hostname is checked beside the pool's addresses.
	w = newHealthWorld(t)
	w.health.Hostname = "relay.mailroom.example"
	w.dns.SetA("relay.mailroom.example", "192.0.2.99")
	want(t, w.run(t), mailroom.HealthFCrDNS, mailroom.HealthFail, "--hostname relay.mailroom.example", "192.0.2.99 has no PTR record")
}

// A sending address listed on a DNSBL zone fails, naming the zone and the
// list's answer; clean on another zone changes nothing of that.
func TestHealthDNSBLListed(t *testing.T) {
	w := newHealthWorld(t)
	w.health.DNSBLZones = []string{"clean.dnsbl.test", "bl.dnsbl.test"}
	want(t, w.run(t), mailroom.HealthDNSBL, mailroom.HealthPass, "listed on none of clean.dnsbl.test, bl.dnsbl.test")

	w.dns.SetA("10.2.0.192.bl.dnsbl.test", "127.0.0.2")
	w.dns.SetTXT("10.2.0.192.bl.dnsbl.test", "Listed for spam, see https://bl.dnsbl.test/lookup")
	want(t, w.run(t), mailroom.HealthDNSBL, mailroom.HealthFail, "192.0.2.10 is listed on bl.dnsbl.test with 127.0.0.2", "Listed for spam")
	if strings.Contains(w.run(t)[mailroom.HealthDNSBL].Detail, "clean.dnsbl.test") {
		t.Error("the detail names a zone that does not list the address")
	}

	// An IPv6 address is looked up by its nibbles (RFC 5782 §2.4).
	w6 := newHealthWorld(t)
	w6.health.DNSBLZones = []string{"bl.dnsbl.test"}
	w6.health.Sending.Pools[0].Addresses = []mailroom.SourceAddress{{IP: netip.MustParseAddr("2001:db8::25"), EHLOName: mtaHost}}
	w6.dns.SetA("5.2.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.8.b.d.0.1.0.0.2.bl.dnsbl.test", "127.0.0.4")
	want(t, w6.run(t), mailroom.HealthDNSBL, mailroom.HealthFail, "2001:db8::25 is listed on bl.dnsbl.test with 127.0.0.4")

	// A list refusing the query says nothing of the address.
	w.dns.Remove("10.2.0.192.bl.dnsbl.test")
	w.dns.SetA("10.2.0.192.bl.dnsbl.test", "127.255.255.254")
	want(t, w.run(t), mailroom.HealthDNSBL, mailroom.HealthWarn, "refused the query")
}

// The return-path MX pointing elsewhere fails with the record to publish;
// MTA-STS and TLS-RPT absent warn with what to publish.
func TestHealthReturnPathAndTLSAdvice(t *testing.T) {
	w := newHealthWorld(t)
	w.dns.Remove(w.d.ReturnPathDomain)
	w.dns.SetTXT(w.d.ReturnPathDomain, "v=spf1 ip4:"+sendIP+" -all")
	w.dns.SetMX(w.d.ReturnPathDomain, 10, "mx.elsewhere.example")
	w.dns.Remove("_mta-sts." + custName)
	w.dns.Remove("_smtp._tls." + custName)
	got := w.run(t)
	want(t, got, mailroom.HealthReturnPathMX, mailroom.HealthFail, "10 mx.elsewhere.example", "MX bounces.shop.example 10 mta.mailroom.example")
	want(t, got, mailroom.HealthMTASTS, mailroom.HealthWarn, "_mta-sts.shop.example", "v=STSv1")
	want(t, got, mailroom.HealthTLSRPT, mailroom.HealthWarn, "_smtp._tls.shop.example", "v=TLSRPTv1")
}

// A lookup that gets no answer makes its check warn "could not check",
// never fail, and the other checks still answer.
func TestHealthLookupTimeoutWarns(t *testing.T) {
	w := newHealthWorld(t)
	w.dns.Drop("_dmarc." + custName)
	w.dns.Fail("_mta-sts."+custName, 2) // SERVFAIL
	w.health.DNSBLZones = []string{"bl.dnsbl.test"}
	w.dns.Drop("10.2.0.192.bl.dnsbl.test")
	got := w.run(t)
	want(t, got, mailroom.HealthDMARC, mailroom.HealthWarn, "Could not check", "timed out")
	want(t, got, mailroom.HealthMTASTS, mailroom.HealthWarn, "Could not check", "SERVFAIL")
	want(t, got, mailroom.HealthDNSBL, mailroom.HealthWarn, "Could not check")
	want(t, got, mailroom.HealthTLSRPT, mailroom.HealthPass)
}
