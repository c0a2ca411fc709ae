package dns

import (
	"context"
	"fmt"
	"net"
	"strings"

	"blitiri.com.ar/go/spf"

	"github.com/mailroom/mailroom"
)

// The Resolver is what SPF evaluation looks names up with.
var _ spf.DNSResolver = (*Resolver)(nil)

// checkSPF verifies that the bounce subdomain, the envelope sender's domain
// on which receivers check SPF (RFC 7208 §2.4), has one SPF record and that
// it authorises every address this service sends from.
func (c *Checker) checkSPF(ctx context.Context, rec mailroom.DNSRecord) outcome {
	r := c.resolver()
	txts, err := r.LookupTXT(ctx, rec.Name)
	if err != nil {
		if notFound, o := lookupFailed(err); !notFound {
			return o
		}
	}
	failed := func(format string, args ...any) outcome {
		return outcome{status: mailroom.RecordFailed, found: txts, problem: fmt.Sprintf(format, args...)}
	}

	// RFC 7208 §4.5: records that begin "v=spf1" (followed by a space or
	// nothing) are SPF records; other TXT records are ignored, and more
	// than one SPF record is a permerror.
	var records []string
	for _, txt := range txts {
		l := strings.ToLower(txt)
		if l == "v=spf1" || strings.HasPrefix(l, "v=spf1 ") {
			records = append(records, txt)
		}
	}
	switch len(records) {
	case 0:
		return failed("No SPF record (v=spf1 …) was found at %s; publish the value shown.", rec.Name)
	case 1:
	default:
		return failed("%d SPF records were found at %s; a domain may have only one (RFC 7208 §4.5), so receivers treat this as an error. Keep only the value shown.", len(records), rec.Name)
	}

	ips, o, ok := c.sendingIPs(ctx, r)
	if !ok {
		return o
	}
	for _, ip := range ips {
		result, err := spf.CheckHostWithSender(ip, rec.Name, "postmaster@"+rec.Name,
			spf.WithResolver(r), spf.WithContext(ctx))
		switch result {
		case spf.Pass:
			continue
		case spf.TempError:
			return indeterminate(err)
		case spf.PermError:
			return failed("The SPF record at %s is invalid (permerror: %v); publish the value shown.", rec.Name, err)
		}
		return failed("The SPF record at %s evaluates to %s for %s, an address this service sends from; publish the value shown.", rec.Name, result, ip)
	}
	return outcome{status: mailroom.RecordVerified, found: txts}
}

// sendingIPs are the addresses SPF must authorise: the configured ones, or
// those of the sending host. Not finding them is the operator's problem, not
// the customer's, so it leaves the record's state alone.
func (c *Checker) sendingIPs(ctx context.Context, r *Resolver) ([]net.IP, outcome, bool) {
	if len(c.SendingIPs) > 0 {
		return c.SendingIPs, outcome{}, true
	}
	addrs, err := r.LookupIPAddr(ctx, c.SendingHost)
	if err != nil {
		if notFound, o := lookupFailed(err); !notFound {
			return nil, o, false
		}
		return nil, outcome{
			indeterminate: true,
			problem: fmt.Sprintf("The check could not be completed: this service's sending host %s has no address in DNS (a setting of the operator); the record keeps its previous state.",
				c.SendingHost),
		}, false
	}
	ips := make([]net.IP, len(addrs))
	for i, a := range addrs {
		ips[i] = a.IP
	}
	return ips, outcome{}, true
}
