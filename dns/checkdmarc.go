package dns

import (
	"context"
	"fmt"

	"github.com/mailroom/mailroom"
)

// checkDMARC looks for the domain's DMARC policy record. DMARC is
// recommended, not required, so a missing record leaves the record pending
// with advice; it never fails the record.
func (c *Checker) checkDMARC(ctx context.Context, rec mailroom.DNSRecord) outcome {
	txts, err := c.resolver().LookupTXT(ctx, rec.Name)
	if err != nil {
		if notFound, o := lookupFailed(err); !notFound {
			return o
		}
	}
	// RFC 7489 §6.3: a DMARC record's first tag is v=DMARC1, exactly;
	// other TXT records at the name are ignored.
	n := 0
	for _, txt := range txts {
		if tags, err := parseTags(txt); err == nil && len(tags) > 0 && tags[0].name == "v" && tags[0].value == "DMARC1" {
			n++
		}
	}
	switch n {
	case 0:
		return outcome{
			status:  mailroom.RecordPending,
			found:   txts,
			problem: fmt.Sprintf("No DMARC record (v=DMARC1; …) was found at %s. It is optional, but recommended: it tells receivers what to do with mail that fails authentication.", rec.Name),
		}
	case 1:
		return outcome{status: mailroom.RecordVerified, found: txts}
	}
	// RFC 7489 §6.6.3: several DMARC records mean no policy at all.
	return outcome{
		status:  mailroom.RecordPending,
		found:   txts,
		problem: fmt.Sprintf("%d DMARC records were found at %s; receivers ignore them all when there is more than one (RFC 7489 §6.6.3). Keep one.", n, rec.Name),
	}
}
