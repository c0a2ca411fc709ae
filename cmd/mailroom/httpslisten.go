package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"net/netip"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/mailroom/mailroom/connlimit"
	mhttp "github.com/mailroom/mailroom/http"
)

// httpsFlags are the HTTPS listener's connection caps (docs/api.md
// "Limits") and --dev's one way off loopback.
type httpsFlags struct {
	maxConns           int
	maxConnsPerAddress int
	devListenAnywhere  bool
}

func (f *httpsFlags) register(fs *flag.FlagSet) {
	fs.IntVar(&f.maxConns, "max-connections", mhttp.DefaultMaxConns(), "the most HTTPS connections held at once; more are reset before the TLS handshake (by default 10000, or half the open-file limit when that is lower)")
	fs.IntVar(&f.maxConnsPerAddress, "max-connections-per-address", mhttp.DefaultMaxConnsPerAddress, "the most HTTPS connections one client address (an IPv4 address or an IPv6 /64) holds at once")
	fs.BoolVar(&f.devListenAnywhere, "dev-listen-anywhere", false, "let --dev listen on a --listen address that is not loopback, where anyone who reaches it can use its printed key's every scope")
}

// check refuses a malformed --listen, caps below 1, and --dev on an
// address other machines can reach unless --dev-listen-anywhere says so.
func (f *httpsFlags) check(ctx context.Context, dev bool, listen string) error {
	if err := checkListenAddr(ctx, "--listen", listen); err != nil {
		return err
	}
	if f.maxConns < 1 || f.maxConnsPerAddress < 1 {
		return usageError{"--max-connections and --max-connections-per-address must be at least 1"}
	}
	if f.devListenAnywhere && !dev {
		return usageError{"--dev-listen-anywhere goes with --dev"}
	}
	if dev && !f.devListenAnywhere {
		if problem := devListenProblem(ctx, listen); problem != "" {
			return usageError{fmt.Sprintf("--dev listens on loopback only, and --listen %q %s: "+
				"--dev prints a key with every scope and lets webhooks reach this machine's and its network's private addresses, "+
				"which anyone who can reach the listener could then use. Use --listen 127.0.0.1:PORT (or [::1]:PORT), "+
				"or add --dev-listen-anywhere when the network is yours alone", listen, problem)}
		}
	}
	return nil
}

// warn tells the operator of settings that weaken what the defaults hold.
func (f *httpsFlags) warn(dev bool, listen string, log *slog.Logger) {
	if dev && f.devListenAnywhere {
		log.Warn("--dev-listen-anywhere: the development key, with every scope, works for anyone who reaches "+listen, "listen", listen)
	}
	if n, ok := connlimit.OpenFileLimit(); ok && f.maxConns > n/2 {
		log.Warn(fmt.Sprintf("--max-connections %d is more than half the open-file limit (%d): a flood of HTTPS connections could leave "+
			"storage, SMTP and delivery without file descriptors; raise the limit (ulimit -n, systemd LimitNOFILE=) or lower the cap", f.maxConns, n),
			"max_connections", f.maxConns, "open_file_limit", n)
	}
}

// listen opens the HTTPS listener with its connection caps, counted on reg.
func (f *httpsFlags) listen(addr string, reg prometheus.Registerer) (net.Listener, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, err
	}
	return mhttp.LimitConnections(ln, mhttp.ConnLimits{PerAddress: f.maxConnsPerAddress, Total: f.maxConns}, reg), nil
}

// devListenProblem says why the listen address addr is reachable from
// other machines, or "" when it is on loopback alone: an IP address must be
// a loopback one, and a name must resolve to loopback addresses only (Go
// listens on one of them).
func devListenProblem(ctx context.Context, addr string) string {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return "is not HOST:PORT"
	}
	if host == "" {
		return "listens on every interface"
	}
	if ip, err := netip.ParseAddr(host); err == nil {
		switch {
		case ip.IsUnspecified():
			return "listens on every interface"
		case !ip.Unmap().IsLoopback():
			return "is not a loopback address"
		}
		return ""
	}
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	ips, err := net.DefaultResolver.LookupNetIP(ctx, "ip", host)
	if err != nil || len(ips) == 0 {
		return "does not resolve"
	}
	for _, ip := range ips {
		if !ip.Unmap().IsLoopback() {
			return "resolves to " + ip.String() + ", not a loopback address"
		}
	}
	return ""
}
