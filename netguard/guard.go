// Package netguard keeps the service's outbound HTTP requests (webhook
// deliveries) away from the networks behind it: a customer's URL must not
// reach the operator's loopback, private networks or cloud metadata
// service (server-side request forgery). The check runs twice: when a URL
// is saved (CheckURL: a clear 400 for the customer) and in the dialer's
// Control hook at every connection (Control), so that a name that
// resolved to a public address then and to a private one now (DNS
// rebinding) is refused where it matters, on the address actually dialled.
package netguard

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"syscall"
)

// Refused networks beyond what netip's own predicates name: shared
// address space (RFC 6598 CGNAT), "this network" (RFC 791), IETF protocol
// assignments (RFC 6890), benchmarking (RFC 2544), the reserved 240/4 and
// the limited broadcast, the documentation ranges (RFC 5737, RFC 3849,
// and 3fff::/20 of RFC 9637), discard-only (RFC 6666), IPv6 benchmarking
// (RFC 5180), ORCHID and ORCHIDv2 identifiers, which are not addresses
// (RFC 4843, RFC 7343), the SRv6 SID block 5f00::/16 (RFC 9602), and the
// deprecated site-local fec0::/10 (RFC 3879), still routed inside some
// networks. None is a place a webhook receiver can be.
var refused = []netip.Prefix{
	netip.MustParsePrefix("0.0.0.0/8"),
	netip.MustParsePrefix("100.64.0.0/10"),
	netip.MustParsePrefix("192.0.0.0/24"),
	netip.MustParsePrefix("192.0.2.0/24"),
	netip.MustParsePrefix("198.18.0.0/15"),
	netip.MustParsePrefix("198.51.100.0/24"),
	netip.MustParsePrefix("203.0.113.0/24"),
	netip.MustParsePrefix("240.0.0.0/4"),
	netip.MustParsePrefix("100::/64"),
	netip.MustParsePrefix("2001:db8::/32"),
	netip.MustParsePrefix("3fff::/20"),
	netip.MustParsePrefix("2001:2::/48"),
	netip.MustParsePrefix("2001:10::/28"),
	netip.MustParsePrefix("2001:20::/28"),
	netip.MustParsePrefix("5f00::/16"),
	netip.MustParsePrefix("fec0::/10"),
}

// embedsIPv4 are the IPv6 ranges whose addresses carry an IPv4 address
// that a translator, relay or tunnel on the path may turn into an IPv4
// connection: to a private or loopback address, if that is what is
// inside. Each is refused whole, whatever the IPv4 address inside, rather
// than decoded: a receiver with a public IPv4 address is reached by that
// address, and no webhook receiver needs one of these forms. The
// IPv4-mapped form (::ffff:0:0/96) is not among them: a connection to it
// is an IPv4 connection to exactly the address inside, which refusal
// checks as such.
var embedsIPv4 = []struct {
	prefix netip.Prefix
	form   string
}{
	// RFC 4291 §2.5.5.1: deprecated, yet some stacks still route it to
	// the IPv4 address in its last 32 bits.
	{netip.MustParsePrefix("::/96"), "IPv4-compatible"},
	// RFC 6145 §2.1 (SIIT): ::ffff:0:a.b.c.d, translated to a.b.c.d.
	{netip.MustParsePrefix("::ffff:0:0:0/96"), "SIIT IPv4-translated"},
	// RFC 6052 §2.1 and RFC 8215: the NAT64 well-known and local-use
	// prefixes, translated to the IPv4 address inside. A network-specific
	// prefix (RFC 6052 §2.2) is the operator's own choice and cannot be
	// recognised here: docs/api.md "Webhooks" says so.
	{netip.MustParsePrefix("64:ff9b::/96"), "NAT64"},
	{netip.MustParsePrefix("64:ff9b:1::/48"), "NAT64 local-use"},
	// RFC 4380 §4 (Teredo): bits 32-63 are the Teredo server's IPv4
	// address, the last 32 bits the client's, inverted; a relay sends the
	// packets over UDP to the client's address. Refused whole: both
	// addresses would need checking, Teredo's public service has ended,
	// and no webhook receiver is reached through it.
	{netip.MustParsePrefix("2001::/32"), "Teredo"},
	// RFC 3056 §2 (6to4): bits 16-47 are the IPv4 address of the site's
	// relay.
	{netip.MustParsePrefix("2002::/16"), "6to4"},
}

// ErrRefused is wrapped by every refusal of an address.
var ErrRefused = errors.New("address not allowed")

// CheckAddr returns an error wrapping ErrRefused unless a is a public
// unicast address: loopback, private (RFC 1918, RFC 4193 fc00::/7),
// link-local (169.254/16, where cloud metadata services answer, and
// fe80::/10), multicast, unspecified and the ranges of refused are not,
// nor any of them written as an IPv4-mapped IPv6 address (::ffff:127.0.0.1),
// nor any IPv6 address of a form that holds an IPv4 address (embedsIPv4).
func CheckAddr(a netip.Addr) error {
	if what := refusal(a); what != "" {
		return fmt.Errorf("%s is %s: %w", a, what, ErrRefused)
	}
	return nil
}

// refusal says what kind of address a is when CheckAddr refuses it, and
// is empty when it does not.
func refusal(a netip.Addr) string {
	a = a.Unmap()
	switch {
	case !a.IsValid():
		return "not an address"
	case a.IsLoopback():
		return "a loopback address"
	case a.IsPrivate():
		return "a private address"
	case a.IsLinkLocalUnicast(), a.IsLinkLocalMulticast():
		return "a link-local address"
	case a.IsMulticast(), a.IsInterfaceLocalMulticast():
		return "a multicast address"
	case a.IsUnspecified():
		return "the unspecified address"
	}
	for _, p := range refused {
		if p.Contains(a) {
			return "a reserved address (" + p.String() + ")"
		}
	}
	for _, e := range embedsIPv4 {
		if e.prefix.Contains(a) {
			return "an IPv6 address holding an IPv4 address (" + e.form + ", " + e.prefix.String() + ")"
		}
	}
	return ""
}

// Control is a net.Dialer Control hook that refuses to connect to an
// address CheckAddr refuses: it sees the address being dialled, after any
// resolution, so no name can lead past it.
func Control(network, address string, _ syscall.RawConn) error {
	host, _, err := net.SplitHostPort(address)
	if err != nil {
		return fmt.Errorf("%s: %w", address, ErrRefused)
	}
	a, err := netip.ParseAddr(host)
	if err != nil {
		return fmt.Errorf("%s: %w", address, ErrRefused)
	}
	return CheckAddr(a)
}

// Resolver looks up a host's addresses; *net.Resolver is one.
type Resolver interface {
	LookupNetIP(ctx context.Context, network, host string) ([]netip.Addr, error)
}

// CheckURL checks a URL a customer gives for the service to call: https
// only, no user information, a host whose every address CheckAddr allows
// (one private address among public ones is enough to refuse: the dialer
// may pick it). allowPrivate (the operator's choice, for local development
// and tests) takes http too and any address. The error says what is wrong
// in words for the customer.
func CheckURL(ctx context.Context, r Resolver, raw string, allowPrivate bool) error {
	u, err := url.Parse(raw)
	switch {
	case err != nil:
		return errors.New("is not a URL")
	case u.Scheme != "https" && !(allowPrivate && u.Scheme == "http"):
		return errors.New("must be an https URL")
	case u.User != nil:
		return errors.New("must not hold a user name or password")
	case u.Hostname() == "":
		return errors.New("has no host")
	case !validPort(u.Port()):
		return fmt.Errorf("has a port, %q, that is not a number from 1 to 65535", u.Port())
	case u.Fragment != "" || strings.Contains(raw, "#"):
		return errors.New("must not have a fragment (#…)")
	}
	if allowPrivate {
		return nil
	}
	host := u.Hostname()
	var addrs []netip.Addr
	if a, err := netip.ParseAddr(host); err == nil {
		addrs = []netip.Addr{a}
	} else if addrs, err = r.LookupNetIP(ctx, "ip", host); err != nil || len(addrs) == 0 {
		return fmt.Errorf("has a host, %s, that does not resolve", host)
	}
	for _, a := range addrs {
		if what := refusal(a); what != "" {
			return fmt.Errorf("has a host, %s, that resolves to %s, %s; the service only calls public addresses", host, a, what)
		}
	}
	return nil
}

// validPort says whether a URL's port is absent or a number from 1 to
// 65535: url.Parse takes any digits.
func validPort(p string) bool {
	if p == "" {
		return true
	}
	n, err := strconv.Atoi(p)
	return err == nil && n >= 1 && n <= 65535
}
