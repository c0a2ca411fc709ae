package domain

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"blitiri.com.ar/go/spf"

	"github.com/mailroom/mailroom"
)

// checkSPF evaluates the SPF record receivers check for the domain's mail
// (RFC 7208 §2.4: that of the envelope sender's domain, its bounce
// subdomain) for each address the domain's mail leaves from, as a receiver
// would with blitiri.com.ar/go/spf. The required spf record proves the
// record is published; this check proves it covers the addresses of this
// node's --ip-pool or --sending-ips, which an operator may have changed.
func (h *Health) checkSPF(ctx context.Context, d *mailroom.Domain, addrs sendingAddrs) finding {
	name := d.ReturnPathDomain
	if name == "" {
		name = d.Name
	}
	want := "the spf record shown with the domain"
	if rec, ok := recordValue(d, mailroom.PurposeSPF); ok {
		name = rec.Name
		want = fmt.Sprintf("TXT %s %q", rec.Name, rec.Value)
	}
	list, err := addrs.of(d)
	if err != nil {
		return couldNotCheck(err)
	}
	if len(list) == 0 {
		return warn("Could not check: this node has no sending address to evaluate %s's SPF record for.", name)
	}
	var f finding
	var ok []string
	for _, a := range list {
		result, err := spf.CheckHostWithSender(a.IP.AsSlice(), name, "postmaster@"+name,
			spf.WithResolver(h.Resolver), spf.WithContext(ctx))
		switch result {
		case spf.Pass:
			ok = append(ok, a.IP.String())
		case spf.TempError:
			if err == nil {
				err = errors.New("temporary error")
			}
			f.add(couldNotCheck(fmt.Errorf("SPF evaluation of %s for %s: %w", name, a.IP, err)))
		case spf.None:
			f.add(fail("No SPF record at %s, so receivers cannot tell that %s may send for the domain. Publish %s.", name, a.IP, want))
		case spf.PermError:
			f.add(fail("The SPF record at %s is invalid (permerror: %v), so receivers treat mail from %s as unauthenticated. Publish %s.", name, err, a.IP, want))
		default:
			f.add(fail("The SPF record at %s evaluates to %s for %s, an address the domain's mail leaves from. Publish %s; if it is published, the operator's --spf-mechanisms do not cover %s (add ip%s:%s to them).",
				name, result, a.IP, want, a.IP, ipVersion(a.IP.Is4()), a.IP))
		}
	}
	if f.status == "" {
		return pass("The SPF record at %s allows every sending address (%s).", name, strings.Join(ok, ", "))
	}
	return f
}

func ipVersion(v4 bool) string {
	if v4 {
		return "4"
	}
	return "6"
}
