package domain

import (
	"context"
	"fmt"
	"net/netip"
	"strings"

	mdns "github.com/miekg/dns"

	"github.com/mailroom/mailroom"
)

// checkDNSBL looks each address the domain's mail leaves from up in each
// of the operator's blocklists (--dnsbl), as receivers do (RFC 5782 §2.1):
// an address record at the address's reversed form under the zone means
// listed, and its value (127.0.0.2, …) the list's reason; NXDOMAIN means
// not listed. Delisting is the operator's business, with the list.
func (h *Health) checkDNSBL(ctx context.Context, d *mailroom.Domain, addrs sendingAddrs) finding {
	list, err := addrs.of(d)
	if err != nil {
		return couldNotCheck(err)
	}
	var f finding
	for _, a := range list {
		for _, zone := range h.DNSBLZones {
			f.add(h.lookupDNSBL(ctx, a.IP, zone))
		}
	}
	if f.status == "" {
		return warn("Could not check: this node has no sending address to look up.")
	}
	if f.status == mailroom.HealthPass {
		var ips []string
		for _, a := range list {
			ips = append(ips, a.IP.String())
		}
		return pass("%s listed on none of %s.", strings.Join(ips, ", "), strings.Join(h.DNSBLZones, ", "))
	}
	return f
}

// lookupDNSBL looks ip up in one zone.
func (h *Health) lookupDNSBL(ctx context.Context, ip netip.Addr, zone string) finding {
	name, ok := dnsblName(ip, zone)
	if !ok {
		return couldNotCheck(fmt.Errorf("%s cannot be looked up in %s", ip, zone))
	}
	found, err := h.Resolver.LookupNetIP(ctx, "ip4", name)
	if err != nil {
		if isNotFound(err) {
			return pass("")
		}
		return couldNotCheck(err)
	}
	var codes []string
	for _, a := range found {
		// RFC 5782 §2.1: listings are 127.0.0.0/8. Spamhaus answers
		// 127.255.255.x when it refuses the query (from an open resolver,
		// or over its quota): that says nothing of the address.
		if !a.Is4() || a.As4()[0] != 127 {
			continue
		}
		if a.As4()[1] == 255 && a.As4()[2] == 255 {
			return warn("Could not check %s on %s: the list refused the query (answer %s); use a resolver the list accepts (--dns-server).", ip, zone, a)
		}
		codes = append(codes, a.String())
	}
	if len(codes) == 0 {
		return pass("")
	}
	why := ""
	if txts, err := h.Resolver.LookupTXT(ctx, name); err == nil && len(txts) > 0 {
		why = fmt.Sprintf(" (%q)", mailroom.Excerpt(txts[0], 200))
	}
	return fail("%s is listed on %s with %s%s: receivers using the list refuse or junk its mail. Find why on the list's site and request delisting, or send from another address (--ip-pool).",
		ip, zone, strings.Join(codes, ", "), why)
}

// dnsblName is the name ip is looked up at in zone (RFC 5782 §2.1 and
// §2.4): the octets, or for IPv6 the nibbles, in reverse order.
func dnsblName(ip netip.Addr, zone string) (string, bool) {
	rev, err := mdns.ReverseAddr(ip.Unmap().String())
	if err != nil {
		return "", false
	}
	rev = strings.TrimSuffix(strings.TrimSuffix(rev, "in-addr.arpa."), "ip6.arpa.")
	return rev + strings.TrimSuffix(zone, "."), true
}
