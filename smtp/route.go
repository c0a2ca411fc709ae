package smtp

import (
	"context"
	"errors"
	"math/rand/v2"
	"net"
	"strings"

	"github.com/mailroom/mailroom/dns"
)

// route is where a domain's mail goes: its MX hosts in the order to try
// them, or, when the domain takes no mail, the verdict.
type route struct {
	hosts []string
	// addrs holds addresses already known: those of the domain itself
	// when it is its own implicit MX.
	addrs map[string][]net.IPAddr
}

// findRoute looks up the MX hosts of domain (RFC 5321 §5.1).
func findRoute(ctx context.Context, r *dns.Resolver, domain string) (route, status, bool) {
	mxs, err := r.LookupMX(ctx, domain)
	if err != nil {
		if !isNotFound(err) {
			return route{}, deferred(enhDNS, "looking up the MX records of %s: %v", domain, err), false
		}
		// RFC 5321 §5.1: no MX records, and the domain's own address
		// records make it its own MX ("implicit MX"). When it has none
		// either, the domain does not exist for mail: the resolver
		// cannot tell NXDOMAIN from no records of a type, and either way
		// no attempt later will find a host.
		addrs, err := r.LookupIPAddr(ctx, domain)
		switch {
		case err == nil:
			return route{hosts: []string{domain}, addrs: map[string][]net.IPAddr{domain: addrs}}, status{}, true
		case isNotFound(err):
			return route{}, local(550, enhNoDomain, "%s has no MX or address records: the domain does not receive mail", domain), false
		default:
			return route{}, deferred(enhDNS, "looking up the addresses of %s: %v", domain, err), false
		}
	}
	if dns.IsNullMX(mxs) {
		// RFC 7505 §3: the domain says it accepts no mail at all; the
		// client reports 556 5.1.10 without connecting anywhere.
		return route{}, local(556, enhNullMX, "%s does not accept mail (null MX, RFC 7505)", domain), false
	}

	var rt route
	seen := map[string]bool{}
	for start := 0; start < len(mxs); {
		// RFC 5321 §5.1: hosts of equal preference are tried in random
		// order, to spread the load among them.
		end := start
		for end < len(mxs) && mxs[end].Pref == mxs[start].Pref {
			end++
		}
		group := mxs[start:end]
		rand.Shuffle(len(group), func(i, j int) { group[i], group[j] = group[j], group[i] })
		for _, mx := range group {
			host := hostName(mx.Host)
			// A "." among real MX records is the domain's mistake (RFC
			// 7505 §3 forbids the mix) and is skipped.
			if host == "" || seen[host] {
				continue
			}
			seen[host] = true
			rt.hosts = append(rt.hosts, host)
		}
		start = end
	}
	if len(rt.hosts) == 0 {
		return route{}, local(556, enhNullMX, "%s does not accept mail (null MX, RFC 7505)", domain), false
	}
	return rt, status{}, true
}

// hostName is a DNS name as the pool and the log know it: lower case,
// without the root's trailing dot.
func hostName(name string) string {
	return strings.TrimSuffix(strings.ToLower(strings.TrimSpace(name)), ".")
}

// isNotFound reports an answer that the name or record does not exist, as
// opposed to a DNS failure, which is temporary.
func isNotFound(err error) bool {
	var derr *net.DNSError
	return errors.As(err, &derr) && derr.IsNotFound
}
