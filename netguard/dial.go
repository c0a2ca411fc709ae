package netguard

import (
	"context"
	"net"
	"net/netip"
)

// ResolvingDial dials through r's answers instead of the system's
// resolver, so that a request finds a host where CheckURL found it (serve
// --dns-server). Each address is dialled in turn by dialer, whose Control
// hook (Control, unless private addresses are allowed) still checks it:
// webhooks and TLS reports' https destinations go through it.
func ResolvingDial(r Resolver, dialer *net.Dialer) func(ctx context.Context, network, addr string) (net.Conn, error) {
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		host, port, err := net.SplitHostPort(addr)
		if err != nil {
			return nil, err
		}
		if _, err := netip.ParseAddr(host); err == nil {
			return dialer.DialContext(ctx, network, addr)
		}
		ips, err := r.LookupNetIP(ctx, "ip", host)
		if err != nil {
			return nil, err
		}
		if len(ips) == 0 {
			return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
		}
		var last error
		for _, ip := range ips {
			c, err := dialer.DialContext(ctx, network, net.JoinHostPort(ip.String(), port))
			if err == nil {
				return c, nil
			}
			last = err
		}
		return nil, last
	}
}

// GuardedDial is the dial function of a client whose destinations a
// stranger chose (webhook URLs, TLS report addresses): dialer with Control
// on every connection, on the address actually dialled, so that a name
// resolving to a private address now (DNS rebinding) is refused, unless
// allowPrivate (serve --webhooks-allow-private); through r's answers when
// r is set (ResolvingDial). dialer's own Control is replaced.
func GuardedDial(r Resolver, dialer *net.Dialer, allowPrivate bool) func(ctx context.Context, network, addr string) (net.Conn, error) {
	dialer.Control = nil
	if !allowPrivate {
		dialer.Control = Control
	}
	if r == nil {
		return dialer.DialContext
	}
	return ResolvingDial(r, dialer)
}
