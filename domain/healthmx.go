package domain

import (
	"context"
	"fmt"
	"strings"

	"github.com/mailroom/mailroom"
	"github.com/mailroom/mailroom/dns"
)

// checkReturnPathMX checks that the bounce subdomain's MX names the host
// that receives bounces for this service, as the required return_path
// record says, so that DSNs sent to the envelope sender (RFC 5321
// §4.5.5) come back and bounced addresses get suppressed.
func (h *Health) checkReturnPathMX(ctx context.Context, d *mailroom.Domain, _ sendingAddrs) finding {
	name, want, add := d.ReturnPathDomain, strings.TrimSuffix(h.MXHost, "."), ""
	if rec, ok := recordValue(d, mailroom.PurposeReturnPath); ok {
		name = rec.Name
		if want == "" {
			want = strings.TrimSuffix(rec.Value, ".")
		}
		prio := 10
		if rec.Priority != nil {
			prio = *rec.Priority
		}
		add = fmt.Sprintf("MX %s %d %s", rec.Name, prio, want)
	} else {
		add = fmt.Sprintf("MX %s 10 %s", name, want)
	}
	mxs, err := h.Resolver.LookupMX(ctx, name)
	switch {
	case err != nil && isNotFound(err):
		return fail("No MX record at %s, so bounces cannot come back and bounced addresses are not suppressed. Add %s.", name, add)
	case err != nil:
		return couldNotCheck(err)
	case dns.IsNullMX(mxs):
		return fail("%s has a null MX (RFC 7505), which refuses all mail, bounces included. Replace it with %s.", name, add)
	}
	var found []string
	for _, mx := range mxs {
		host := strings.TrimSuffix(mx.Host, ".")
		if strings.EqualFold(host, want) {
			return pass("The MX of %s points at %s.", name, want)
		}
		found = append(found, fmt.Sprintf("%d %s", mx.Pref, host))
	}
	return fail("The MX of %s points at %s, not at %s, so bounces do not come back here. Replace it with %s.",
		name, strings.Join(found, ", "), want, add)
}
