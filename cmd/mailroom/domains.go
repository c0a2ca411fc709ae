package main

import (
	"flag"
	"fmt"
	"log/slog"
	"net"
	"strings"
	"time"

	"github.com/mailroom/mailroom"
	"github.com/mailroom/mailroom/dns"
	"github.com/mailroom/mailroom/domain"
)

// domainFlags are the operator's settings for sending domains: which DNS
// server to ask, what the records customers publish must say, and how many
// domains one account may have.
type domainFlags struct {
	max            int
	dnsServer      string
	spfMechanisms  string
	mxHost         string
	sendingIPs     string
	returnPathName string
}

func (f *domainFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&f.dnsServer, "dns-server", "", "the `HOST:PORT` of the DNS server for MX lookups and domain checks (default: the system's)")
	fs.StringVar(&f.spfMechanisms, "spf-mechanisms", "", "the SPF `MECHANISMS` customers publish to authorise this service's sending hosts (default \"a:<hostname>\")")
	fs.StringVar(&f.mxHost, "mx-host", "", "the `HOST` that receives bounces, named in customers' return-path MX (default: --hostname)")
	fs.StringVar(&f.sendingIPs, "sending-ips", "", "comma-separated `IPS` mail leaves from, which customers' SPF must authorise (default: the addresses of --hostname)")
	fs.StringVar(&f.returnPathName, "return-path-label", mailroom.DefaultReturnPathLabel, "the bounce subdomain's `LABEL`: <label>.<customer domain>")
	fs.IntVar(&f.max, "max-domains", mailroom.DefaultMaxDomains, "how many sending domains one account may have")
}

// check refuses the flags' mistakes, before serve touches storage.
func (f *domainFlags) check() error {
	if f.max < 1 {
		return usageError{"--max-domains must be at least 1"}
	}
	if _, err := f.sendingIPList(); err != nil {
		return err
	}
	if f.dnsServer != "" {
		if _, _, err := net.SplitHostPort(f.dnsServer); err != nil {
			return usageError{fmt.Sprintf("--dns-server must be HOST:PORT: %v", err)}
		}
	}
	return nil
}

// sendingIPList is --sending-ips parsed.
func (f *domainFlags) sendingIPList() ([]net.IP, error) {
	var ips []net.IP
	for _, s := range strings.Split(f.sendingIPs, ",") {
		if s = strings.TrimSpace(s); s == "" {
			continue
		}
		ip := net.ParseIP(s)
		if ip == nil {
			return nil, usageError{fmt.Sprintf("--sending-ips: %q is not an IP address", s)}
		}
		ips = append(ips, ip)
	}
	return ips, nil
}

// service builds the domains service on hostname's defaults, on flags
// check accepted.
func (f *domainFlags) service(store mailroom.Store, seal mailroom.Sealer, hostname string, log *slog.Logger) (*domain.Service, *dns.Resolver, error) {
	settings := mailroom.DefaultRecordSettings(hostname)
	settings.ReturnPathLabel = f.returnPathName
	if f.spfMechanisms != "" {
		settings.SPFInclude = f.spfMechanisms
	}
	if f.mxHost != "" {
		settings.MXHost = strings.TrimSuffix(strings.ToLower(f.mxHost), ".")
	}
	ips, err := f.sendingIPList()
	if err != nil {
		return nil, nil, err
	}
	resolver := &dns.Resolver{Server: f.dnsServer, Timeout: 5 * time.Second}
	return &domain.Service{
		Store: store,
		Checker: &dns.Checker{
			Resolver:    resolver,
			SendingIPs:  ips,
			SendingHost: hostname,
			MXHost:      settings.MXHost,
		},
		Sealer:   seal,
		Settings: settings,
		Max:      f.max,
		Now:      time.Now,
		Log:      log,
	}, resolver, nil
}
