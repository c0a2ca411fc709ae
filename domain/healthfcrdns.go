package domain

import (
	"context"
	"fmt"
	"strings"

	"github.com/mailroom/mailroom"
)

// checkFCrDNS checks the forward-confirmed reverse DNS of each address
// the domain's mail leaves from, and of --hostname: its PTR names a host
// that resolves back to it (RFC 8601 §3 "iprev", RFC 1912 §2.1). Gmail
// refuses mail from addresses without it (550 5.7.25). Only the operator
// (and the address's owner, who sets the PTR) can fix it; the detail
// names the records to set.
func (h *Health) checkFCrDNS(ctx context.Context, d *mailroom.Domain, addrs sendingAddrs) finding {
	var f finding
	var good []string
	list, err := addrs.of(d)
	if err != nil {
		f.add(couldNotCheck(err))
	}
	for _, a := range list {
		name := a.EHLOName
		if name == "" {
			name = h.Hostname
		}
		problem, err := h.Resolver.CheckFCrDNS(ctx, a.IP, name)
		switch {
		case err != nil:
			f.add(couldNotCheck(err))
		case problem != "":
			f.add(fail("%s: set the PTR record of %s to %s (with the address's provider) and an address record %s → %s.",
				problem, a.IP, name, name, a.IP))
		default:
			good = append(good, fmt.Sprintf("%s ↔ %s", a.IP, name))
		}
	}
	// --hostname's own addresses, unless they were the sending addresses
	// just checked.
	if !addrs.fromHostname && mailroom.HostnameProblem(h.Hostname) == "" {
		problems, err := h.Resolver.CheckNameFCrDNS(ctx, h.Hostname)
		switch {
		case err != nil:
			f.add(couldNotCheck(err))
		case len(problems) > 0:
			f.add(fail("--hostname %s: %s: its addresses' PTR records must name %s.", h.Hostname, strings.Join(problems, "; "), h.Hostname))
		default:
			good = append(good, h.Hostname)
		}
	}
	if f.status == "" {
		if len(good) == 0 {
			return warn("Could not check: no sending address or --hostname to look up.")
		}
		return pass("Forward-confirmed reverse DNS holds for %s.", strings.Join(good, ", "))
	}
	return f
}
