package domain

import (
	"context"
	"net"
	"net/netip"

	"github.com/mailroom/mailroom"
	"github.com/mailroom/mailroom/dns"
)

// SendingAddresses are the addresses this node's mail leaves from, as its
// flags say (docs/api.md "How mail leaves"): the domain's --ip-pool (the
// first pool for the default pool, or for a pool this node lacks, as
// delivery picks it), else --sending-ips, else the addresses of --hostname.
type SendingAddresses struct {
	Pools    []mailroom.IPPool
	IPs      []net.IP
	Hostname string
}

// sendingAddrs are the addresses a check looks at, and how it came by
// them.
type sendingAddrs struct {
	// byPool: the domain's pool, each address with its EHLO name.
	byPool map[string][]mailroom.SourceAddress
	// list: --sending-ips or the hostname's addresses, each named by
	// Hostname in EHLO; fromHostname when they are the latter.
	list         []mailroom.SourceAddress
	fromHostname bool
	err          error // the hostname's addresses could not be looked up
}

// lookup gathers the addresses once for every check of a run.
func (s SendingAddresses) lookup(ctx context.Context, r *dns.Resolver) sendingAddrs {
	var out sendingAddrs
	if len(s.Pools) > 0 {
		out.byPool = map[string][]mailroom.SourceAddress{}
		for _, p := range s.Pools {
			out.byPool[p.Name] = p.Addresses
		}
		out.byPool[""] = s.Pools[0].Addresses
		return out
	}
	if len(s.IPs) > 0 {
		for _, ip := range s.IPs {
			if a, ok := netip.AddrFromSlice(ip); ok {
				out.list = append(out.list, mailroom.SourceAddress{IP: a.Unmap()})
			}
		}
		return out
	}
	out.fromHostname = true
	addrs, err := r.LookupNetIP(ctx, "ip", s.Hostname)
	if err != nil {
		out.err = err
		return out
	}
	for _, a := range addrs {
		out.list = append(out.list, mailroom.SourceAddress{IP: a.Unmap()})
	}
	return out
}

// of is the addresses d's mail leaves from, each with the name it gives
// in EHLO ("" for --hostname), and an error when they could not be found.
func (a sendingAddrs) of(d *mailroom.Domain) ([]mailroom.SourceAddress, error) {
	if a.byPool != nil {
		if p, ok := a.byPool[d.IPPool]; ok {
			return p, nil
		}
		return a.byPool[""], nil
	}
	return a.list, a.err
}
