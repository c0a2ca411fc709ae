package dns

import (
	"context"
	"fmt"
	"net"
	"strings"

	"github.com/mailroom/mailroom"
)

// checkReturnPath verifies that the bounce subdomain's MX names the host
// that receives bounces, so that DSNs sent to the envelope sender
// (RFC 5321 §4.5.5) come back to this service.
func (c *Checker) checkReturnPath(ctx context.Context, rec mailroom.DNSRecord) outcome {
	o, _ := c.checkMX(ctx, rec, "bounces could not come back")
	return o
}

// checkReceiving verifies that a receiving domain's MX names this
// service's MX host, so that mail for the domain comes here (RFC 5321
// §5.1). The host need not be the only MX, and a less preferred one than
// another host is the customer's choice (a backup, or a filter in front
// that forwards): it verifies, with a note that senders try the other host
// first (RFC 5321 §5.1: the lowest preference number first).
func (c *Checker) checkReceiving(ctx context.Context, rec mailroom.DNSRecord) outcome {
	o, mxs := c.checkMX(ctx, rec, "no mail could arrive")
	if o.status != mailroom.RecordVerified || o.indeterminate {
		return o
	}
	want := c.MXHost
	if want == "" {
		want = rec.Value
	}
	ours, best := -1, -1
	bestHost := ""
	for _, mx := range mxs {
		if sameHost(mx.Host, want) && (ours < 0 || int(mx.Pref) < ours) {
			ours = int(mx.Pref)
		}
		if !sameHost(mx.Host, want) && (best < 0 || int(mx.Pref) < best) {
			best, bestHost = int(mx.Pref), mx.Host
		}
	}
	if best >= 0 && best < ours {
		o.problem = fmt.Sprintf("%s (preference %d) comes before %s (preference %d): senders deliver there first, and mail reaches Mailroom only when that host does not answer or forwards it; give %s the lowest preference number to receive here first.",
			strings.TrimSuffix(bestHost, "."), best, strings.TrimSuffix(want, "."), ours, strings.TrimSuffix(want, "."))
	}
	return o
}

// checkMX verifies that an MX at rec.Name names the MX host; refused says
// what a null MX would mean for the record's purpose. It returns the MX
// records found too.
func (c *Checker) checkMX(ctx context.Context, rec mailroom.DNSRecord, refused string) (outcome, []*net.MX) {
	want := c.MXHost
	if want == "" {
		want = rec.Value
	}
	mxs, err := c.resolver().LookupMX(ctx, rec.Name)
	if err != nil {
		if notFound, o := lookupFailed(err); !notFound {
			return o, nil
		}
		return outcome{
			status:  mailroom.RecordFailed,
			problem: fmt.Sprintf("No MX record was found at %s; publish an MX record pointing at %s.", rec.Name, strings.TrimSuffix(want, ".")),
		}, nil
	}
	found := make([]string, len(mxs))
	for i, mx := range mxs {
		found[i] = fmt.Sprintf("%d %s", mx.Pref, mx.Host)
	}
	if IsNullMX(mxs) {
		return outcome{
			status: mailroom.RecordFailed,
			found:  found,
			problem: fmt.Sprintf("%s has a null MX (RFC 7505), which refuses all mail, so %s; replace it with an MX record pointing at %s.",
				rec.Name, refused, strings.TrimSuffix(want, ".")),
		}, mxs
	}
	for _, mx := range mxs {
		if sameHost(mx.Host, want) {
			return outcome{status: mailroom.RecordVerified, found: found}, mxs
		}
	}
	return outcome{
		status:  mailroom.RecordFailed,
		found:   found,
		problem: fmt.Sprintf("No MX record at %s points at %s.", rec.Name, strings.TrimSuffix(want, ".")),
	}, mxs
}
