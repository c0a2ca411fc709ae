package main

import (
	"flag"
	"fmt"
	"strings"

	"github.com/mailroom/mailroom"
	"github.com/mailroom/mailroom/dns"
	"github.com/mailroom/mailroom/domain"
)

// healthFlags are the operator's settings of the domains' health checks
// (docs/api.md "Domain health"): the DNS blocklists each sending address
// is looked up in.
type healthFlags struct {
	dnsbl []string
}

func (f *healthFlags) register(fs *flag.FlagSet) {
	fs.Func("dnsbl", "a DNS blocklist `ZONE` (such as zen.spamhaus.org) the domains' dnsbl check looks each sending address up in (repeatable, or comma-separated; without it there is no dnsbl check)",
		func(v string) error {
			for z := range strings.SplitSeq(v, ",") {
				if z = strings.TrimSpace(z); z == "" {
					continue
				}
				zone, err := mailroom.NormalizeDomainName(z)
				if err != nil {
					return fmt.Errorf("--dnsbl %q is not a DNS zone", z)
				}
				f.dnsbl = append(f.dnsbl, zone)
			}
			return nil
		})
}

// health is the domains' health checks, on the addresses this node sends
// from: --ip-pool, else --sending-ips, else --hostname's.
func (f *healthFlags) health(resolver *dns.Resolver, hostname, mxHost string, pools []mailroom.IPPool, sendingIPs *domainFlags) (*domain.Health, error) {
	ips, err := sendingIPs.sendingIPList()
	if err != nil {
		return nil, err
	}
	return &domain.Health{
		Resolver:   resolver,
		Sending:    domain.SendingAddresses{Pools: pools, IPs: ips, Hostname: hostname},
		Hostname:   hostname,
		MXHost:     mxHost,
		DNSBLZones: f.dnsbl,
	}, nil
}
