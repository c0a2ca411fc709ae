package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"net/netip"
	"os"
	"os/signal"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/mailroom/mailroom"
	"github.com/mailroom/mailroom/dns"
	"github.com/mailroom/mailroom/sites"
)

// sitesFlags are how direct delivery treats each destination site
// (docs/api.md "How mail leaves"): the site profiles, the greylisting
// retry, and the pools of source addresses.
type sitesFlags struct {
	policyFile    string
	greylistRetry time.Duration
	pools         []mailroom.IPPool

	// policy is policyFile as check read it (the built-in policy without
	// one).
	policy mailroom.DeliveryPolicy
}

func (f *sitesFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&f.policyFile, "delivery-policy", "", "a TOML `FILE` of site limits overriding the built-in profiles (docs/api.md \"How mail leaves\"); read again on SIGHUP")
	fs.DurationVar(&f.greylistRetry, "greylist-retry", 5*time.Minute, "the wait before retrying a greylisted recipient the first time")
	fs.Func("ip-pool", "a pool of source addresses, `NAME=ADDR[@EHLO-NAME],…` (repeatable; the first is the default pool); each address's EHLO name is what its PTR record names",
		func(v string) error {
			p, err := mailroom.ParseIPPool(v)
			if err != nil {
				return err
			}
			for _, q := range f.pools {
				if q.Name == p.Name {
					return fmt.Errorf("--ip-pool %s is given twice", p.Name)
				}
			}
			f.pools = append(f.pools, p)
			return nil
		})
}

// check reads the policy file and refuses what would fail later: a bad
// policy file, a greylisting retry that is not positive, and a pool
// address this machine does not have (a connection from it would fail
// for every message).
func (f *sitesFlags) check() error {
	if f.greylistRetry <= 0 {
		return usageError{"--greylist-retry must be positive"}
	}
	f.policy = mailroom.NewDeliveryPolicy()
	if f.policyFile != "" {
		p, err := sites.LoadPolicy(f.policyFile)
		if err != nil {
			return usageError{"--delivery-policy: " + err.Error()}
		}
		f.policy = p
	}
	for _, p := range f.pools {
		for _, a := range p.Addresses {
			if err := checkLocalAddress(a.IP); err != nil {
				return usageError{fmt.Sprintf("--ip-pool %s: %s is not an address of this machine: %v", p.Name, a.IP, err)}
			}
		}
	}
	return nil
}

// checkLocalAddress reports whether this machine can send from ip: whether
// a socket can be bound to it.
func checkLocalAddress(ip netip.Addr) error {
	ln, err := net.Listen("tcp", netip.AddrPortFrom(ip, 0).String())
	if err != nil {
		return err
	}
	return ln.Close()
}

// tracker is the sites' state of this node. nodes is how many nodes share
// the sites' limits, kept by the heartbeat.
func (f *sitesFlags) tracker(store mailroom.SiteSuspensionStore, nodes *atomic.Int64, log *slog.Logger) *sites.Tracker {
	return sites.New(f.policy, sites.Options{
		Nodes: func() int { return max(1, int(nodes.Load())) },
		Store: store, Now: time.Now, Log: log,
	})
}

// reloadOnHangup reads the policy file again on each SIGHUP until ctx ends:
// a good file takes effect at once; a bad one is refused, with its line
// and reason, and the running policy stays.
func (f *sitesFlags) reloadOnHangup(ctx context.Context, t *sites.Tracker, log *slog.Logger) {
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	defer signal.Stop(hup)
	for {
		select {
		case <-ctx.Done():
			return
		case <-hup:
		}
		if f.policyFile == "" {
			log.Info("SIGHUP: no --delivery-policy file to read; the built-in site profiles stay")
			continue
		}
		p, err := sites.LoadPolicy(f.policyFile)
		if err != nil {
			log.Error("SIGHUP: the delivery policy was not reloaded; the running policy stays", "file", f.policyFile, "err", err)
			continue
		}
		t.SetPolicy(p)
		log.Info("SIGHUP: delivery policy reloaded", "file", f.policyFile, "sites", len(p.Sites))
	}
}

// warnReverseDNS checks the forward-confirmed reverse DNS of each pool
// address (its PTR names its EHLO name, which resolves back to it) and of
// --hostname, and warns, naming what is wrong: receivers refuse or
// down-rank mail from an address whose name does not confirm (Gmail's and
// Yahoo's sender requirements, RFC 8601's iprev). The addresses are still
// used.
func (f *sitesFlags) warnReverseDNS(ctx context.Context, resolver *dns.Resolver, hostname string, log *slog.Logger) {
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	for _, p := range f.pools {
		for _, a := range p.Addresses {
			name := a.EHLOName
			if name == "" {
				name = hostname
			}
			problem, err := resolver.CheckFCrDNS(ctx, a.IP, name)
			switch {
			case err != nil:
				log.Warn("could not check the reverse DNS of a sending address", "pool", p.Name, "address", a.IP.String(), "err", err)
			case problem != "":
				log.Warn("sending address without forward-confirmed reverse DNS: "+problem, "pool", p.Name, "address", a.IP.String(), "name", name)
			}
		}
	}
	if len(f.pools) > 0 || mailroom.HostnameProblem(hostname) != "" {
		// The pools are the sending addresses; a hostname that is no
		// domain name was warned about already.
		return
	}
	problems, err := resolver.CheckNameFCrDNS(ctx, hostname)
	switch {
	case err != nil:
		log.Warn("could not check the reverse DNS of --hostname", "hostname", hostname, "err", err)
	case len(problems) > 0:
		log.Warn("--hostname without forward-confirmed reverse DNS: "+strings.Join(problems, "; "), "hostname", hostname)
	}
}
