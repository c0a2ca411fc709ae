package mtasts

import (
	"context"
	"errors"
	"net"
)

// discovery is what the TXT record _mta-sts.<domain> said.
type discovery int

const (
	// announced: one valid record; its id names the policy.
	announced discovery = iota
	// absent: no record, or none usable (several, or an invalid one):
	// the domain announces no policy (RFC 8461 §3.1).
	absent
	// unknown: the DNS could not answer (SERVFAIL, timeout): nothing is
	// learnt, and what is cached stays as it is.
	unknown
)

// discover looks up _mta-sts.<domain> through the configured resolver
// (RFC 8461 §3.1).
func (p *Policies) discover(ctx context.Context, domain string) (Record, discovery, error) {
	txts, err := p.resolver.LookupTXT(ctx, "_mta-sts."+domain)
	if err != nil {
		if derr, ok := errors.AsType[*net.DNSError](err); ok && derr.IsNotFound {
			return Record{}, absent, errNoRecord
		}
		return Record{}, unknown, err
	}
	rec, err := pickRecord(txts)
	if err != nil {
		return Record{}, absent, err
	}
	return rec, announced, nil
}
