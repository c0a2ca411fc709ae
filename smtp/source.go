package smtp

import (
	"context"
	"fmt"
	"net"
	"net/netip"
)

// SourceDialer is a Dialer that can dial from a chosen local address: the
// addresses of Direct's IP pools. A *net.Dialer needs no such method (a
// copy of it is given the LocalAddr); another Dialer given to a Direct with
// pools must be a SourceDialer.
type SourceDialer interface {
	Dialer
	DialFrom(ctx context.Context, local netip.Addr, network, address string) (net.Conn, error)
}

// dial connects to addr from src, or from the address the system picks
// when src is not valid.
func (e *engine) dial(ctx context.Context, src netip.Addr, addr string) (net.Conn, error) {
	if !src.IsValid() {
		return e.cfg.dialer.DialContext(ctx, "tcp", addr)
	}
	switch d := e.cfg.dialer.(type) {
	case *net.Dialer:
		from := *d
		from.LocalAddr = &net.TCPAddr{IP: src.AsSlice()}
		return from.DialContext(ctx, "tcp", addr)
	case SourceDialer:
		return d.DialFrom(ctx, src, "tcp", addr)
	}
	return nil, fmt.Errorf("the configured dialer cannot dial from a chosen address (%s)", src)
}

// fromSource says which source address a connection came from, for
// messages; nothing when the system picked it.
func fromSource(src netip.Addr) string {
	if !src.IsValid() {
		return ""
	}
	return " from " + src.String()
}

// sourceName is a source address as a connKey names it: "" when the
// system picks the address.
func sourceName(src netip.Addr) string {
	if !src.IsValid() {
		return ""
	}
	return src.String()
}

// sameFamily keeps the addresses src can reach: an IPv4 source address
// cannot dial an IPv6 one, nor the other way round. Without a source
// address, all.
func sameFamily(src netip.Addr, ips []net.IPAddr) []net.IPAddr {
	if !src.IsValid() {
		return ips
	}
	var out []net.IPAddr
	for _, ip := range ips {
		if a, ok := netip.AddrFromSlice(ip.IP); ok && a.Unmap().Is4() == src.Is4() {
			out = append(out, ip)
		}
	}
	return out
}
