package dns

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"slices"
	"strings"
)

// CheckFCrDNS checks the forward-confirmed reverse DNS of ip: the check
// receivers make of a connecting address (RFC 8601 §3 "iprev", RFC 1912
// §2.1; the big providers refuse or junk mail from addresses that fail
// it). A PTR record of ip must name a host whose address records include
// ip, and when wantName is set (the name connections from ip give in
// EHLO), that host must be wantName. problem is empty when the check
// holds, and otherwise says what is wrong in words, naming the address;
// err is set, and problem empty, when DNS did not answer well enough to
// tell.
func (r *Resolver) CheckFCrDNS(ctx context.Context, ip netip.Addr, wantName string) (problem string, err error) {
	ip = ip.Unmap()
	names, err := r.LookupAddr(ctx, ip.String())
	if err != nil {
		if isNotFound(err) {
			return fmt.Sprintf("%s has no PTR record", ip), nil
		}
		return "", err
	}
	for i, n := range names {
		names[i] = canonicalName(n)
	}
	slices.Sort(names)
	names = slices.Compact(names)
	want := canonicalName(wantName)
	candidates := names
	if want != "" {
		if !slices.Contains(names, want) {
			return fmt.Sprintf("PTR of %s names %s, not %s", ip, strings.Join(names, " and "), want), nil
		}
		candidates = []string{want}
	}
	var lookupErr error
	for _, name := range candidates {
		addrs, err := r.LookupNetIP(ctx, "ip", name)
		switch {
		case err == nil && slices.ContainsFunc(addrs, func(a netip.Addr) bool { return a.Unmap() == ip }):
			return "", nil
		case err != nil && !isNotFound(err):
			lookupErr = err
		}
	}
	if lookupErr != nil {
		return "", lookupErr
	}
	verb := "does"
	if len(candidates) > 1 {
		verb = "do"
	}
	return fmt.Sprintf("PTR of %s names %s, which %s not resolve to %s", ip, strings.Join(candidates, " and "), verb, ip), nil
}

// CheckNameFCrDNS checks the forward-confirmed reverse DNS of every
// address of name (--hostname, which EHLO gives when a source address
// has no name of its own): each must have a PTR record naming name. It
// returns a problem per address that fails, or that name has no address.
func (r *Resolver) CheckNameFCrDNS(ctx context.Context, name string) (problems []string, err error) {
	name = canonicalName(name)
	addrs, err := r.LookupNetIP(ctx, "ip", name)
	if err != nil {
		if isNotFound(err) {
			return []string{fmt.Sprintf("%s has no address record", name)}, nil
		}
		return nil, err
	}
	for _, ip := range addrs {
		problem, err := r.CheckFCrDNS(ctx, ip, name)
		if err != nil {
			return problems, err
		}
		if problem != "" {
			problems = append(problems, problem)
		}
	}
	return problems, nil
}

// isNotFound reports an answer that the name or the record does not exist,
// as opposed to a failure to get an answer.
func isNotFound(err error) bool {
	var derr *net.DNSError
	return errors.As(err, &derr) && derr.IsNotFound
}

// canonicalName is a host name as names are compared: lower case (RFC
// 4343 §3), without the root's trailing dot.
func canonicalName(name string) string {
	return strings.TrimSuffix(strings.ToLower(strings.TrimSpace(name)), ".")
}
