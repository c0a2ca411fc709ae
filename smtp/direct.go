package smtp

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"log/slog"
	"net"
	"net/netip"
	"os"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/mailroom/mailroom"
	"github.com/mailroom/mailroom/dns"
	"github.com/mailroom/mailroom/positive"
)

// Direct delivers to each recipient domain's MX hosts (--delivery direct).
// Set its fields before the first Deliver; it is safe for concurrent use.
type Direct struct {
	// Resolver looks up MX and address records (--dns-server).
	Resolver *dns.Resolver
	// Hostname is the name given in EHLO (--hostname).
	Hostname string
	// Port is dialled on every MX host (--smtp-port); zero means 25.
	Port int
	// TLSConfig is the base of every STARTTLS handshake (versions, cipher
	// suites); nil accepts any version from TLS 1.0, as MTAs do (RFC 7435
	// §1). Whatever it says, the handshake itself verifies nothing
	// (InsecureSkipVerify): the certificate is checked afterwards, against
	// RootCAs and for the MX host's name (RFC 8461 §4.2), so that a
	// session whose certificate fails is still encrypted where no policy
	// requires more, and knows it is not verified. Where a policy requires
	// verified TLS (an enforced MTA-STS policy, a sending domain's
	// "enforced", REQUIRETLS; see tlsGate), a host without it is refused
	// and its mail never goes in clear; otherwise a server whose TLS fails
	// gets the mail in clear on a new connection (see engine.open).
	TLSConfig *tls.Config
	// RootCAs are the roots certificates are checked against; nil means
	// the system's, which on Linux honour SSL_CERT_FILE and SSL_CERT_DIR.
	RootCAs *x509.CertPool
	// MTASTS finds each recipient domain's MTA-STS policy (RFC 8461;
	// package mtasts); nil: no domain has one.
	MTASTS mailroom.MTASTSPolicies
	// TLSObserver is told of every TLS decision on a session and of every
	// policy that could not be had (TLS-RPT, RFC 8460; package tlsrpt);
	// nil: no one is.
	TLSObserver mailroom.TLSObserver
	// Dialer opens connections; nil means a net.Dialer.
	Dialer Dialer

	// DialTimeout, CommandTimeout, DataTimeout and IdleTimeout default to
	// the package's Default constants when zero.
	DialTimeout    time.Duration
	CommandTimeout time.Duration
	DataTimeout    time.Duration
	IdleTimeout    time.Duration
	// MaxConnsPerHost and MaxConns cap the connections open (in use and
	// idle) per MX host and overall; zero means DefaultMaxConnsPerHost and
	// DefaultMaxConns. With Sites, a site's limits replace the per-host
	// cap.
	MaxConnsPerHost int
	MaxConns        int

	// Sites, when set, groups deliveries by the destination's site
	// (docs/api.md "How mail leaves"): connections are capped and kept per
	// site and source address, so that a session to any MX host of a site
	// carries mail for any of its domains; each transaction takes a place
	// in the site's rate; the site's profile sets the connect timeout and
	// the messages a connection carries; and throttling replies are told
	// to it, close their connection and wait for the site's next place.
	// Nil keeps the per-host caps of MaxConnsPerHost, and no throttles.
	Sites mailroom.Sites
	// Pools are the pools of source addresses (--ip-pool); the first is
	// the default, for a delivery whose IPPool is empty or unknown. A
	// pool's connections rotate among its addresses, each saying EHLO
	// with the address's own name (Hostname when it has none). Empty: the
	// system picks the address, and EHLO says Hostname.
	Pools []mailroom.IPPool
	// Now is the clock the site's rate is read by; nil means time.Now.
	Now func() time.Time
	// Log receives what an operator should know (an unknown pool); nil is
	// slog.Default().
	Log *slog.Logger

	once         sync.Once
	eng          *engine
	unknownPools sync.Map
}

var _ mailroom.Transport = (*Direct)(nil)

// NewDirect returns a Direct that asks resolver and introduces itself as
// hostname (the machine's name when empty), with every other field at its
// default.
func NewDirect(resolver *dns.Resolver, hostname string) *Direct {
	if hostname == "" {
		hostname, _ = os.Hostname()
	}
	return &Direct{
		Resolver:        resolver,
		Hostname:        hostname,
		Port:            DefaultPort,
		DialTimeout:     DefaultDialTimeout,
		CommandTimeout:  DefaultCommandTimeout,
		DataTimeout:     DefaultDataTimeout,
		IdleTimeout:     DefaultIdleTimeout,
		MaxConnsPerHost: DefaultMaxConnsPerHost,
		MaxConns:        DefaultMaxConns,
	}
}

func (d *Direct) engine() *engine {
	d.once.Do(func() {
		cfg := d.TLSConfig.Clone()
		if cfg == nil {
			// Any TLS is better than none here (RFC 7435 §1), so old
			// servers are met where they are.
			cfg = &tls.Config{MinVersion: tls.VersionTLS10}
		}
		// Checked after the handshake instead (verifyPeer).
		cfg.InsecureSkipVerify = true
		d.eng = newEngine(engineConfig{
			hostname:       d.Hostname,
			dialer:         d.Dialer,
			dialTimeout:    d.DialTimeout,
			commandTimeout: d.CommandTimeout,
			dataTimeout:    d.DataTimeout,
			idleTimeout:    d.IdleTimeout,
			maxPerHost:     d.MaxConnsPerHost,
			maxTotal:       d.MaxConns,
			sites:          d.Sites,
			tlsConfig:      cfg,
			verifyCerts:    true,
			roots:          d.RootCAs,
			plainFallback:  true,
		})
	})
	return d.eng
}

// Deliver sends del to its domain's MX hosts, in order of preference
// (del.PreferMX first when it is still one of them), moving to the next
// host when one cannot be reached or will not start a session (RFC 5321
// §5.1), and returns one result per recipient in order. Once a host has
// answered the transaction, its replies are final for this attempt. With
// Sites, the delivery goes to its site (see toSite).
//
// The delivery's TLS requirement (tlsGate: REQUIRETLS, the recipient
// domain's MTA-STS policy, the sending domain's tls, the strongest
// winning) decides which hosts and sessions may carry it. When none
// qualified, every recipient is deferred with reason tls_required (enhanced
// code 4.7.5, the text naming each host refused and why); a REQUIRETLS
// delivery is bounced instead (550 5.7.30, RFC 8689 §5) unless some host
// failed for another reason or the MTA-STS policy could not be fetched,
// which may pass. One without a validated MX (no MTA-STS policy in enforce
// mode) bounces without connecting anywhere.
func (d *Direct) Deliver(ctx context.Context, del *mailroom.Delivery) []mailroom.RecipientResult {
	if len(del.Recipients) == 0 {
		return nil
	}
	eng := d.engine()
	domain := hostName(del.Domain)
	resolver := d.Resolver
	if resolver == nil {
		resolver = &dns.Resolver{}
	}
	gate := d.gate(ctx, del, domain)
	rt, why, ok := findRoute(ctx, resolver, domain)
	if ok && !slices.ContainsFunc(rt.hosts, gate.allows) {
		// No host may be used: decided here, before any slot or
		// place in a site's rate is taken.
		for _, host := range rt.hosts {
			gate.rejectMX(host)
		}
		why, ok = gate.verdict(why), false
	}
	if !ok {
		// No host was involved: MX stays empty.
		res := results(del.Recipients, "", why)
		if d.Sites != nil {
			if site, ok := d.Sites.SiteOf(domain); ok {
				setSite(res, site)
			}
		}
		return res
	}
	port := strconv.Itoa(positive.Or(d.Port, DefaultPort))
	addrs := func(ctx context.Context, host string, src netip.Addr) ([]string, status) {
		return hostAddrs(ctx, resolver, host, port, rt.addrs[host], src)
	}
	hosts := preferFirst(rt.hosts, hostName(del.PreferMX))
	pool := d.sourcePool(del.IPPool)
	if d.Sites != nil {
		return d.toSite(ctx, eng, del, domain, rt.hosts, hosts, pool, addrs, gate)
	}
	last := domain
	for _, host := range hosts {
		last = host
		if !gate.allows(host) {
			why = gate.rejectMX(host)
			continue
		}
		keys, group := poolKeys(host, pool)
		res, failure, ok := eng.attempt(ctx, host, connRequest{keys: keys, group: group}, pool.Addresses, addrs, del, gate)
		if ok {
			return res
		}
		why = failure
		if ctx.Err() != nil {
			break
		}
	}
	return results(del.Recipients, last, gate.verdict(why))
}

// preferFirst puts prefer first among hosts when it is one of them: a
// greylisted recipient goes back to the host that greylisted it, since
// greylisters remember the triplet per host (RFC 6647 §2.1).
func preferFirst(hosts []string, prefer string) []string {
	i := slices.Index(hosts, prefer)
	if prefer == "" || i <= 0 {
		return hosts
	}
	out := make([]string, 0, len(hosts))
	out = append(out, prefer)
	out = append(out, hosts[:i]...)
	return append(out, hosts[i+1:]...)
}

// hostAddrs gives the addresses to dial for host from src, looking them up
// unless they are known. A host without addresses is passed over, as it
// would be if it did not answer.
func hostAddrs(ctx context.Context, r *dns.Resolver, host, port string, known []net.IPAddr, src netip.Addr) ([]string, status) {
	ips := known
	if ips == nil {
		var err error
		ips, err = r.LookupIPAddr(ctx, host)
		if err != nil {
			return nil, deferred(enhDNS, "looking up the addresses of MX host %s: %v", host, err)
		}
	}
	ips = sameFamily(src, ips)
	if len(ips) == 0 && src.IsValid() {
		family := "IPv4"
		if src.Is6() {
			family = "IPv6"
		}
		return nil, deferred(enhNoAnswer, "MX host %s has no %s address to reach from %s", host, family, src)
	}
	out := make([]string, 0, len(ips))
	for _, ip := range ips {
		out = append(out, net.JoinHostPort(ip.IP.String(), port))
	}
	return out, status{}
}

// Close ends the idle sessions. Deliveries under way finish, and their
// sessions, like those of any Deliver after Close, are closed rather than
// kept.
func (d *Direct) Close() error { return d.engine().close() }
