package dns

import (
	"context"
	"fmt"
	"strings"

	"github.com/mailroom/mailroom"
)

// checkReturnPath verifies that the bounce subdomain's MX names the host
// that receives bounces, so that DSNs sent to the envelope sender
// (RFC 5321 §4.5.5) come back to this service.
func (c *Checker) checkReturnPath(ctx context.Context, rec mailroom.DNSRecord) outcome {
	return c.checkMX(ctx, rec, "bounces could not come back")
}

// checkReceiving verifies that a receiving domain's MX names this
// service's MX host, so that mail for the domain comes here (RFC 5321
// §5.1): the host need not be the only MX, and a lower preference than
// another host's is the customer's choice (a backup, or a filter in front).
func (c *Checker) checkReceiving(ctx context.Context, rec mailroom.DNSRecord) outcome {
	return c.checkMX(ctx, rec, "no mail could arrive")
}

// checkMX verifies that an MX at rec.Name names the MX host; refused says
// what a null MX would mean for the record's purpose.
func (c *Checker) checkMX(ctx context.Context, rec mailroom.DNSRecord, refused string) outcome {
	want := c.MXHost
	if want == "" {
		want = rec.Value
	}
	mxs, err := c.resolver().LookupMX(ctx, rec.Name)
	if err != nil {
		if notFound, o := lookupFailed(err); !notFound {
			return o
		}
		return outcome{
			status:  mailroom.RecordFailed,
			problem: fmt.Sprintf("No MX record was found at %s; publish an MX record pointing at %s.", rec.Name, strings.TrimSuffix(want, ".")),
		}
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
		}
	}
	for _, mx := range mxs {
		if sameHost(mx.Host, want) {
			return outcome{status: mailroom.RecordVerified, found: found}
		}
	}
	return outcome{
		status:  mailroom.RecordFailed,
		found:   found,
		problem: fmt.Sprintf("No MX record at %s points at %s.", rec.Name, strings.TrimSuffix(want, ".")),
	}
}
