package mailroom

import (
	"fmt"
	"net/netip"
	"strings"
)

// IPPool is a named set of local source addresses that connections to
// recipients' servers come from (--ip-pool, docs/api.md "How mail leaves").
// A sending domain is assigned a pool; its mail leaves from the pool's
// addresses in turn.
type IPPool struct {
	Name      string
	Addresses []SourceAddress
}

// SourceAddress is one local address and the host name its PTR record
// names, which EHLO gives on connections from it (RFC 5321 §4.1.4: the
// name a receiver checks against the connecting address).
type SourceAddress struct {
	IP       netip.Addr
	EHLOName string
}

// ParseIPPool reads one --ip-pool value: NAME=ADDR[@EHLO-NAME],… . An
// address without a name is introduced by --hostname.
func ParseIPPool(v string) (IPPool, error) {
	name, list, ok := strings.Cut(v, "=")
	name = strings.TrimSpace(name)
	if !ok || name == "" {
		return IPPool{}, fmt.Errorf("--ip-pool %q: want NAME=ADDRESS[@EHLO-NAME],…", v)
	}
	if !ValidIPPoolName(name) {
		return IPPool{}, fmt.Errorf("--ip-pool %q: a pool name is letters, digits, '-' and '_', at most 64", v)
	}
	p := IPPool{Name: name}
	seen := map[netip.Addr]bool{}
	for item := range strings.SplitSeq(list, ",") {
		addr, ehlo, named := strings.Cut(strings.TrimSpace(item), "@")
		if named && ehlo == "" {
			return IPPool{}, fmt.Errorf("--ip-pool %s: %q has an empty EHLO name after '@'", name, item)
		}
		ip, err := netip.ParseAddr(addr)
		if err != nil {
			return IPPool{}, fmt.Errorf("--ip-pool %s: %q is not an IP address", name, addr)
		}
		ip = ip.Unmap()
		if ip.Zone() != "" || ip.IsUnspecified() || ip.IsMulticast() {
			return IPPool{}, fmt.Errorf("--ip-pool %s: %s cannot be a source address", name, addr)
		}
		if seen[ip] {
			return IPPool{}, fmt.Errorf("--ip-pool %s: %s is listed twice", name, addr)
		}
		seen[ip] = true
		if ehlo != "" {
			h, err := NormalizeDomainName(ehlo)
			if err != nil {
				return IPPool{}, fmt.Errorf("--ip-pool %s: EHLO name %q is not a domain name", name, ehlo)
			}
			ehlo = h
		}
		p.Addresses = append(p.Addresses, SourceAddress{IP: ip, EHLOName: ehlo})
	}
	return p, nil
}

// ValidIPPoolName reports whether name may name an IP pool.
func ValidIPPoolName(name string) bool {
	if len(name) == 0 || len(name) > 64 {
		return false
	}
	for _, c := range name {
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '-' || c == '_') {
			return false
		}
	}
	return true
}
