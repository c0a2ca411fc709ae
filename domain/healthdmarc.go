package domain

import (
	"context"
	"strings"

	"github.com/emersion/go-msgauth/dmarc"

	"github.com/mailroom/mailroom"
)

// checkDMARC looks for the domain's DMARC policy (RFC 7489 §6.6.3): at
// _dmarc.<domain>, else at a parent's, as receivers fall back to the
// organizational domain's. Gmail and Yahoo require one of bulk senders;
// without it the domain warns, with the record to add. A record that does
// not parse fails: receivers then act as if there were none.
func (h *Health) checkDMARC(ctx context.Context, d *mailroom.Domain, _ sendingAddrs) finding {
	suggested := "v=DMARC1; p=none"
	if rec, ok := recordValue(d, mailroom.PurposeDMARC); ok && rec.Value != "" {
		suggested = rec.Value
	}
	for _, name := range dmarcNames(d.Name) {
		txts, err := h.Resolver.LookupTXT(ctx, name)
		if err != nil && !isNotFound(err) {
			return couldNotCheck(err)
		}
		// RFC 7489 §6.6.3: records not starting "v=DMARC1" are ignored;
		// more than one leaves the domain without a policy.
		var records []string
		for _, txt := range txts {
			if strings.HasPrefix(strings.TrimSpace(txt), "v=DMARC1") {
				records = append(records, txt)
			}
		}
		switch {
		case len(records) == 0:
			continue
		case len(records) > 1:
			return fail("%d DMARC records are published at %s; receivers ignore them all when there is more than one (RFC 7489 §6.6.3). Keep one, such as TXT %q.",
				len(records), name, suggested)
		}
		rec, err := dmarc.Parse(records[0])
		if err != nil {
			return fail("The DMARC record at %s, %q, does not parse (%v), so receivers act as if there were none. Replace it with a valid one, such as TXT %q.",
				name, records[0], strings.TrimPrefix(err.Error(), "dmarc: "), suggested)
		}
		from := ""
		if name != "_dmarc."+d.Name {
			from = " (inherited from " + strings.TrimPrefix(name, "_dmarc.") + ")"
		}
		if rec.Policy == dmarc.PolicyNone {
			return pass("DMARC policy p=none at %s%s: receivers only report. Once the aggregate reports show all your mail passing SPF or DKIM, move to p=quarantine, then p=reject, so that mail forging your domain is refused.",
				name, from)
		}
		return pass("DMARC policy p=%s at %s%s.", rec.Policy, name, from)
	}
	return warn("No DMARC record at _dmarc.%s. Gmail and Yahoo require one of bulk senders; add TXT _dmarc.%s %q (p=none to start: receivers report, then tighten it).",
		d.Name, d.Name, suggested)
}

// dmarcNames are the names a receiver may look a policy up at: the
// domain's, then each parent's below the top-level domain. Receivers stop
// at the organizational domain, which a public-suffix list would name;
// without one, a parent's record counts as inherited.
func dmarcNames(domain string) []string {
	labels := strings.Split(domain, ".")
	var out []string
	for i := 0; i < len(labels)-1; i++ {
		out = append(out, "_dmarc."+strings.Join(labels[i:], "."))
	}
	if len(out) == 0 {
		out = []string{"_dmarc." + domain}
	}
	return out
}
