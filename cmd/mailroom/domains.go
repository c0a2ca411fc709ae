package main

import (
	"context"
	"flag"
	"fmt"
	"io"
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

// domainsUpdate is `mailroom domains update DOMAIN --account NAME
// [--ip-pool POOL] [--tls opportunistic|enforced] [--open-tracking on|off]
// [--click-tracking on|off]`: the operator changes a
// sending domain's settings (docs/api.md "How mail leaves") through the
// domains service, which the API shows them from: its pool of source
// addresses (each node's --ip-pool), its tls and its engagement tracking,
// which PATCH /v1/domains/{domain} sets too. Running nodes apply them within 10 s (the
// delivery Signer's domain cache).
func domainsUpdate(ctx context.Context, c *command, args []string, stdout, stderr io.Writer) error {
	fs, sf := c.storageFlagSet()
	account := fs.String("account", "", "the `NAME` of the account the domain belongs to (required)")
	pool := fs.String("ip-pool", "", "the `POOL` the domain's mail leaves from, a NAME of serve's --ip-pool; \"\" for the default pool")
	tlsMode := fs.String("tls", "", "the domain's TLS `MODE`: opportunistic (the default: STARTTLS when offered) or enforced (verified TLS on every delivery)")
	openTracking := fs.String("open-tracking", "", "track opens (`on|off`) of the domain's sends accepted from now on (docs/api.md \"Engagement tracking\"; off by default)")
	clickTracking := fs.String("click-tracking", "", "send the links of the domain's sends accepted from now on through the service (`on|off`), to count clicks (off by default)")
	rest, err := c.parse(fs, args, stdout)
	if err != nil {
		return err
	}
	if len(rest) != 1 {
		return usageError{"domains update takes one argument, the DOMAIN"}
	}
	given := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { given[f.Name] = true })
	if *account == "" || !given["ip-pool"] && !given["tls"] && !given["open-tracking"] && !given["click-tracking"] {
		return usageError{`domains update needs --account and a setting: --ip-pool POOL (--ip-pool "" for the default pool), --tls opportunistic|enforced, --open-tracking on|off or --click-tracking on|off`}
	}
	var u mailroom.DomainUpdate
	if given["ip-pool"] {
		if *pool != "" && !mailroom.ValidIPPoolName(*pool) {
			msg := fmt.Sprintf("--ip-pool %q is not a pool name: letters, digits, '-' and '_', at most 64", *pool)
			if strings.Contains(*pool, "=") {
				// serve's --ip-pool defines pools; its environment twin,
				// MAILROOM_IP_POOL, is this flag's too.
				msg += "; give the NAME of a pool that serve's --ip-pool NAME=ADDRESS,… defines (MAILROOM_IP_POOL is read when --ip-pool is not given)"
			}
			return usageError{msg}
		}
		u.IPPool = pool
	}
	if given["tls"] {
		mode, ok := mailroom.ParseTLSMode(*tlsMode)
		if !ok {
			return usageError{fmt.Sprintf("--tls %q: want opportunistic or enforced", *tlsMode)}
		}
		u.TLS = &mode
	}
	for _, f := range []struct {
		name string
		val  *string
		dst  **bool
	}{{"open-tracking", openTracking, &u.OpenTracking}, {"click-tracking", clickTracking, &u.ClickTracking}} {
		if !given[f.name] {
			continue
		}
		on, ok := parseOnOff(*f.val)
		if !ok {
			return usageError{fmt.Sprintf("--%s %q: want on or off", f.name, *f.val)}
		}
		*f.dst = &on
	}
	return withStore(ctx, *sf, func(s mailroom.Store) error {
		acct, err := s.AccountByName(ctx, *account)
		if err != nil {
			return err
		}
		d, err := (&domain.Service{Store: s}).Update(ctx, acct.ID, rest[0], u)
		if mailroom.IsCode(err, mailroom.ECodeNotFound) {
			return fmt.Errorf("no domain %s in account %s", rest[0], acct.Name)
		} else if err != nil {
			return err
		}
		if u.IPPool != nil {
			to := "the default pool"
			if d.IPPool != "" {
				to = "the IP pool " + d.IPPool
			}
			fmt.Fprintf(stdout, "Domain %s of account %s sends from %s.\n", d.Name, acct.Name, to)
		}
		if u.TLS != nil {
			fmt.Fprintf(stdout, "Domain %s of account %s sends with tls %s.\n", d.Name, acct.Name, d.TLS.OrDefault())
		}
		if u.OpenTracking != nil || u.ClickTracking != nil {
			fmt.Fprintf(stdout, "Domain %s of account %s tracks opens: %s, clicks: %s (for the sends accepted from now on).\n",
				d.Name, acct.Name, onOff(d.Tracking.Opens), onOff(d.Tracking.Clicks))
		}
		fmt.Fprintln(stdout, "Running nodes apply it within 10 s.")
		return nil
	})
}

// parseOnOff reads an on|off flag's value.
func parseOnOff(s string) (bool, bool) {
	switch s {
	case "on":
		return true, true
	case "off":
		return false, true
	}
	return false, false
}

func onOff(b bool) string {
	if b {
		return "on"
	}
	return "off"
}
