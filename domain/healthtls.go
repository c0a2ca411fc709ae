package domain

import (
	"context"
	"strings"

	"github.com/mailroom/mailroom"
)

// checkMTASTS looks for the domain's own MTA-STS policy record (RFC 8461
// §3.1): advice, since it protects the mail the domain receives, not the
// mail it sends; its absence warns with what to publish.
func (h *Health) checkMTASTS(ctx context.Context, d *mailroom.Domain, _ sendingAddrs) finding {
	name := "_mta-sts." + d.Name
	return h.checkAdviceTXT(ctx, name, "v=STSv1",
		func() finding {
			return pass("MTA-STS is published at %s.", name)
		},
		func() finding {
			return warn("No MTA-STS record at %s (advice: it makes servers sending to %s require TLS, RFC 8461). Publish the policy at https://mta-sts.%s/.well-known/mta-sts.txt, then TXT %s \"v=STSv1; id=20260101\".",
				name, d.Name, d.Name, name)
		})
}

// checkTLSRPT looks for the domain's TLS reporting record (RFC 8460 §3):
// advice, as MTA-STS is; without it, servers that fail TLS to the domain
// cannot report it.
func (h *Health) checkTLSRPT(ctx context.Context, d *mailroom.Domain, _ sendingAddrs) finding {
	name := "_smtp._tls." + d.Name
	return h.checkAdviceTXT(ctx, name, "v=TLSRPTv1",
		func() finding {
			return pass("TLS reporting is published at %s.", name)
		},
		func() finding {
			return warn("No TLS-RPT record at %s (advice: servers sending to %s then report TLS failures to you, RFC 8460). Publish TXT %s \"v=TLSRPTv1; rua=mailto:tls-reports@%s\".",
				name, d.Name, name, d.Name)
		})
}

// checkAdviceTXT passes when a TXT record at name starts with version
// (RFC 8461 §3.1 and RFC 8460 §3 both open with their v= tag) and warns
// otherwise.
func (h *Health) checkAdviceTXT(ctx context.Context, name, version string, present, absent func() finding) finding {
	txts, err := h.Resolver.LookupTXT(ctx, name)
	if err != nil && !isNotFound(err) {
		return couldNotCheck(err)
	}
	for _, txt := range txts {
		v, _, _ := strings.Cut(strings.TrimSpace(txt), ";")
		if strings.ReplaceAll(v, " ", "") == version {
			return present()
		}
	}
	return absent()
}
