package receiving

import (
	"context"
	"errors"
	"strings"

	"github.com/emersion/go-msgauth/dmarc"
	"golang.org/x/net/publicsuffix"

	"github.com/mailroom/mailroom"
)

// maxTreeWalk is the number of names DMARCbis's tree walk asks at most
// (RFC 9989 §4.10: the From domain, then at most seven labels, shortened
// one at a time).
const maxTreeWalk = 8

// checkDMARC evaluates DMARC for the From domain (RFC 7489 §6.6.2): it
// passes when SPF passed for an aligned envelope domain or a DKIM
// signature passed for an aligned signing domain, the policy's aspf and
// adkim saying whether aligned means the same organisational domain
// (relaxed, the default) or the same name (strict) (§3.1). A domain
// without a policy is none; a message whose From cannot be read as one
// domain is permerror (§6.6.1). When nothing aligned passed and an
// aligned check could not be made now, the verdict is temperror rather
// than a fail the sender could not help.
func checkDMARC(ctx context.Context, r Resolver, from string, fromErr error, spfResult mailroom.AuthResult, spfDomain string, sigs []mailroom.DKIMSignatureResult) mailroom.AuthResult {
	if fromErr != nil {
		return mailroom.AuthPermError
	}
	if from == "" {
		return mailroom.AuthNone
	}
	rec, err := lookupPolicy(ctx, r, from)
	switch {
	case err != nil:
		return mailroom.AuthTempError
	case rec == nil:
		return mailroom.AuthNone
	}
	temp := false
	if aligned(spfDomain, from, rec.SPFAlignment) {
		switch spfResult {
		case mailroom.AuthPass:
			return mailroom.AuthPass
		case mailroom.AuthTempError:
			temp = true
		}
	}
	for _, s := range sigs {
		if !aligned(s.Domain, from, rec.DKIMAlignment) {
			continue
		}
		switch s.Result {
		case mailroom.AuthPass:
			return mailroom.AuthPass
		case mailroom.AuthTempError:
			temp = true
		}
	}
	if temp {
		return mailroom.AuthTempError
	}
	return mailroom.AuthFail
}

// lookupPolicy finds the DMARC policy that applies to domain by DMARCbis's
// tree walk (RFC 9989 §4.10): _dmarc.<domain>, then, when there is none,
// the parents' from at most seven labels down to two (a public suffix
// alone is not asked), each through go-msgauth's lookup over the
// injected resolver. A record that does not parse counts as none (RFC
// 7489 §6.6.3); a lookup that failed for now is an error.
func lookupPolicy(ctx context.Context, r Resolver, domain string) (*dmarc.Record, error) {
	opts := &dmarc.LookupOptions{LookupTXT: func(name string) ([]string, error) { return r.LookupTXT(ctx, name) }}
	for _, name := range treeWalk(domain) {
		rec, err := dmarc.LookupWithOptions(name, opts)
		switch {
		case err == nil:
			return rec, nil
		case dmarc.IsTempFail(err):
			return nil, err
		case errors.Is(err, dmarc.ErrNoPolicy):
		default:
			// A record that does not parse: the walk goes on.
		}
	}
	return nil, nil
}

// treeWalk lists the names asked for domain's policy, in order.
func treeWalk(domain string) []string {
	labels := strings.Split(domain, ".")
	out := []string{domain}
	start := 1
	if len(labels) > maxTreeWalk {
		start = len(labels) - (maxTreeWalk - 1)
	}
	for i := start; i < len(labels)-1; i++ {
		out = append(out, strings.Join(labels[i:], "."))
	}
	return out
}

// aligned says whether an authenticated domain is aligned with the From
// domain (RFC 7489 §3.1): the same name in strict mode, the same
// organisational domain in relaxed mode, the organisational domain being
// the public-suffix list's registrable domain (§3.2).
func aligned(authenticated, from string, mode dmarc.AlignmentMode) bool {
	authenticated, from = strings.ToLower(authenticated), strings.ToLower(from)
	if authenticated == "" {
		return false
	}
	if authenticated == from {
		return true
	}
	if mode == dmarc.AlignmentStrict {
		return false
	}
	return orgDomain(authenticated) == orgDomain(from)
}

func orgDomain(name string) string {
	if org, err := publicsuffix.EffectiveTLDPlusOne(name); err == nil {
		return org
	}
	return name
}
