// Package dns looks things up in DNS for Mailroom: the records a customer
// published for a sending domain (Checker), and, for delivery, MX and
// address records. It talks to one explicitly chosen server (--dns-server)
// with github.com/miekg/dns, so that tests and operators control exactly
// which server answers, and so that timeouts, SERVFAIL and NXDOMAIN stay
// distinguishable: a broken resolver must never look like a missing record.
package dns

import (
	"context"
	"errors"
	"net"
	"net/netip"
	"slices"
	"strconv"
	"strings"
	"time"

	mdns "github.com/miekg/dns"

	"github.com/mailroom/mailroom/positive"
)

// DefaultTimeout bounds one query when Resolver.Timeout is zero.
const DefaultTimeout = 5 * time.Second

// resolvConf is where the system's resolvers are listed.
const resolvConf = "/etc/resolv.conf"

// ednsBufferSize is the UDP payload size advertised: the DNS Flag Day 2020
// value, which avoids IP fragmentation on common paths.
const ednsBufferSize = 1232

// Resolver asks one DNS server, over UDP and over TCP when the answer is
// truncated (RFC 7766 §5). Its methods have the signatures of net.Resolver's
// so that it can be given to SPF evaluation (blitiri.com.ar/go/spf's
// DNSResolver), and like net.Resolver they fail with a *net.DNSError whose
// IsNotFound (NXDOMAIN, or no record of the type), IsTemporary (SERVFAIL,
// REFUSED, network errors) and IsTimeout are set. The zero value asks the
// first server of /etc/resolv.conf.
type Resolver struct {
	// Server is host:port; empty means the first nameserver of
	// /etc/resolv.conf.
	Server string
	// Timeout bounds each query (and its TCP retry); zero means
	// DefaultTimeout. A context deadline that comes sooner wins.
	Timeout time.Duration
}

// LookupTXT returns the TXT records at name, each record's character-strings
// concatenated without separator: a value longer than 255 bytes is published
// as several strings of one record (RFC 7208 §3.3, RFC 6376 §3.6.2.2).
func (r *Resolver) LookupTXT(ctx context.Context, name string) ([]string, error) {
	rrs, err := r.lookup(ctx, name, mdns.TypeTXT)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, rr := range rrs {
		if txt, ok := rr.(*mdns.TXT); ok {
			var b strings.Builder
			for _, s := range txt.Txt {
				b.WriteString(unescape(s))
			}
			out = append(out, b.String())
		}
	}
	return out, nil
}

// LookupMX returns the MX records at name, sorted by preference, hosts
// fully qualified with the trailing dot as net.Resolver gives them. A null MX
// (RFC 7505: "0 .", the domain accepts no mail) is returned as the host "."
// rather than as an error, so that delivery can bounce at once; see IsNullMX.
func (r *Resolver) LookupMX(ctx context.Context, name string) ([]*net.MX, error) {
	rrs, err := r.lookup(ctx, name, mdns.TypeMX)
	if err != nil {
		return nil, err
	}
	var out []*net.MX
	for _, rr := range rrs {
		if mx, ok := rr.(*mdns.MX); ok {
			out = append(out, &net.MX{Host: mx.Mx, Pref: mx.Preference})
		}
	}
	// RFC 5321 §5.1: lower preference first. Equal preferences keep the
	// server's order; spreading load among them is delivery's business.
	slices.SortStableFunc(out, func(a, b *net.MX) int { return int(a.Pref) - int(b.Pref) })
	return out, nil
}

// IsNullMX reports whether mxs is a null MX: a single record whose host is
// the root (RFC 7505 §3), by which a domain says it accepts no mail.
func IsNullMX(mxs []*net.MX) bool {
	return len(mxs) == 1 && (mxs[0].Host == "." || mxs[0].Host == "")
}

// LookupIPAddr returns the IPv4 and IPv6 addresses of host. It is not found
// only when neither family has an address; an IP literal is returned as is.
func (r *Resolver) LookupIPAddr(ctx context.Context, host string) ([]net.IPAddr, error) {
	if ip := net.ParseIP(host); ip != nil {
		return []net.IPAddr{{IP: ip}}, nil
	}
	type result struct {
		rrs []mdns.RR
		err error
	}
	v6 := make(chan result, 1)
	go func() {
		rrs, err := r.lookup(ctx, host, mdns.TypeAAAA)
		v6 <- result{rrs, err}
	}()
	rrs4, err4 := r.lookup(ctx, host, mdns.TypeA)
	res6 := <-v6

	var out []net.IPAddr
	for _, rr := range append(rrs4, res6.rrs...) {
		switch rr := rr.(type) {
		case *mdns.A:
			out = append(out, net.IPAddr{IP: rr.A})
		case *mdns.AAAA:
			out = append(out, net.IPAddr{IP: rr.AAAA})
		}
	}
	if len(out) > 0 {
		return out, nil
	}
	// Neither family answered with an address: a temporary failure of
	// either outweighs "not found" of the other, since the address may
	// exist behind it.
	for _, err := range []error{err4, res6.err} {
		if derr, ok := err.(*net.DNSError); ok && !derr.IsNotFound {
			return nil, err
		}
	}
	if err4 != nil {
		return nil, err4
	}
	if res6.err != nil {
		return nil, res6.err
	}
	return nil, notFound(host, r.Server)
}

// LookupNetIP is LookupIPAddr as netip addresses (the netguard.Resolver
// of webhook URLs); network is ignored: both families are looked up, since
// the dialer may use either.
func (r *Resolver) LookupNetIP(ctx context.Context, _, host string) ([]netip.Addr, error) {
	addrs, err := r.LookupIPAddr(ctx, host)
	if err != nil {
		return nil, err
	}
	out := make([]netip.Addr, 0, len(addrs))
	for _, a := range addrs {
		if ip, ok := netip.AddrFromSlice(a.IP); ok {
			out = append(out, ip)
		}
	}
	return out, nil
}

// LookupAddr returns the names of addr from its PTR records (RFC 1035
// §3.5, RFC 3596 §2.5), fully qualified with the trailing dot.
func (r *Resolver) LookupAddr(ctx context.Context, addr string) ([]string, error) {
	rev, err := mdns.ReverseAddr(addr)
	if err != nil {
		return nil, &net.DNSError{Err: "unrecognized address", Name: addr}
	}
	rrs, err := r.lookup(ctx, rev, mdns.TypePTR)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, rr := range rrs {
		if ptr, ok := rr.(*mdns.PTR); ok {
			out = append(out, ptr.Ptr)
		}
	}
	return out, nil
}

// lookup asks for the records of one type at name and returns those of the
// type, or a *net.DNSError. NOERROR without a record of the type (NODATA,
// RFC 2308 §2.2) is not found, as NXDOMAIN is: net.Resolver does the same,
// and SPF counts both as void lookups (RFC 7208 §4.6.4).
func (r *Resolver) lookup(ctx context.Context, name string, qtype uint16) ([]mdns.RR, error) {
	server, err := r.server()
	if err != nil {
		return nil, &net.DNSError{Err: err.Error(), Name: name, IsTemporary: true, UnwrapErr: err}
	}
	name = strings.TrimSpace(name)
	if name == "" || name == "." {
		return nil, notFound(name, server)
	}
	timeout := positive.Or(r.Timeout, DefaultTimeout)

	q := new(mdns.Msg)
	q.SetQuestion(mdns.Fqdn(name), qtype)
	q.RecursionDesired = true
	q.SetEdns0(ednsBufferSize, false)

	resp, err := exchange(ctx, "udp", q, server, timeout)
	if err == nil && resp.Truncated {
		resp, err = exchange(ctx, "tcp", q, server, timeout)
	}
	if err != nil {
		return nil, exchangeError(err, name, server)
	}

	switch resp.Rcode {
	case mdns.RcodeSuccess:
	case mdns.RcodeNameError:
		return nil, notFound(name, server)
	default:
		// SERVFAIL, REFUSED and the rest say nothing about the record: the
		// server could not or would not answer (RFC 1035 §4.1.1).
		return nil, &net.DNSError{
			Err:         "server answered " + rcodeName(resp.Rcode),
			Name:        name,
			Server:      server,
			IsTemporary: true,
		}
	}
	var out []mdns.RR
	for _, rr := range resp.Answer {
		// Records of other types are the CNAME chain that led here.
		if rr.Header().Rrtype == qtype {
			out = append(out, rr)
		}
	}
	if len(out) == 0 {
		return nil, notFound(name, server)
	}
	return out, nil
}

// exchange sends one query over network and waits for the answer, at most
// timeout or until ctx ends.
func exchange(ctx context.Context, network string, q *mdns.Msg, server string, timeout time.Duration) (*mdns.Msg, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	c := &mdns.Client{Net: network, Timeout: timeout, UDPSize: ednsBufferSize}
	resp, _, err := c.ExchangeContext(ctx, q, server)
	return resp, err
}

// exchangeError turns a failure to get any answer into a temporary
// *net.DNSError, a timeout when it is one.
func exchangeError(err error, name, server string) error {
	derr := &net.DNSError{Err: err.Error(), Name: name, Server: server, IsTemporary: true, UnwrapErr: err}
	var nerr net.Error
	if errors.Is(err, context.DeadlineExceeded) || (errors.As(err, &nerr) && nerr.Timeout()) {
		derr.Err = "i/o timeout"
		derr.IsTimeout = true
	}
	return derr
}

func notFound(name, server string) error {
	return &net.DNSError{Err: "no such host", Name: name, Server: server, IsNotFound: true}
}

// server is the host:port to ask.
func (r *Resolver) server() (string, error) {
	if r.Server != "" {
		return r.Server, nil
	}
	conf, err := mdns.ClientConfigFromFile(resolvConf)
	if err != nil {
		return "", err
	}
	if len(conf.Servers) == 0 {
		return "", errors.New("no nameserver in " + resolvConf)
	}
	return net.JoinHostPort(conf.Servers[0], conf.Port), nil
}

func rcodeName(rcode int) string {
	if s, ok := mdns.RcodeToString[rcode]; ok {
		return s
	}
	return "RCODE " + strconv.Itoa(rcode)
}

// unescape turns a character-string from miekg/dns's presentation form
// (RFC 1035 §5.1: \DDD for a byte, \X for X) back into its bytes.
func unescape(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c != '\\' || i+1 == len(s) {
			b.WriteByte(c)
			continue
		}
		if i+3 < len(s) && isDigit(s[i+1]) && isDigit(s[i+2]) && isDigit(s[i+3]) {
			n, _ := strconv.Atoi(s[i+1 : i+4])
			b.WriteByte(byte(n))
			i += 3
			continue
		}
		b.WriteByte(s[i+1])
		i++
	}
	return b.String()
}

func isDigit(c byte) bool { return '0' <= c && c <= '9' }
