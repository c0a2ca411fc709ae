package mailroom

import (
	"context"
	"strings"
	"time"
)

// MTASTSMode is an MTA-STS policy's mode (RFC 8461 §5).
type MTASTSMode string

const (
	// MTASTSEnforce: deliver only to matching MX hosts over verified TLS.
	MTASTSEnforce MTASTSMode = "enforce"
	// MTASTSTesting: deliver as usual, report failures (TLS-RPT).
	MTASTSTesting MTASTSMode = "testing"
	// MTASTSNone: the domain has withdrawn its policy.
	MTASTSNone MTASTSMode = "none"
)

// MTASTSPolicy is a recipient domain's MTA-STS policy (RFC 8461 §3.2), as
// fetched and cached (package mtasts).
type MTASTSPolicy struct {
	// Domain is the policy domain (the recipient domain, A-labels).
	Domain string
	// ID is the id of the TXT record `_mta-sts.<Domain>` the policy was
	// fetched under (RFC 8461 §3.1): a new id means a new policy.
	ID     string
	Mode   MTASTSMode
	MX     []string
	MaxAge time.Duration
	// Text is the policy as served, for TLS-RPT's policy-string.
	Text string
	// FetchedAt is when the policy was fetched; it expires MaxAge later.
	FetchedAt time.Time
	// CheckedAt is when the TXT record was last looked up and found to
	// name this policy's id.
	CheckedAt time.Time
}

// ExpiresAt is when the cached policy may no longer be used (RFC 8461 §3.2
// max_age).
func (p *MTASTSPolicy) ExpiresAt() time.Time { return p.FetchedAt.Add(p.MaxAge) }

// MatchesMX reports whether host (an MX host name) is one the policy
// allows (RFC 8461 §4.1): equal to an `mx` pattern, or, for a pattern
// "*.example.com", with exactly one label in place of the asterisk
// ("mx.example.com", not "example.com" nor "a.b.example.com"). Names
// compare case-insensitively, without trailing dots.
func (p *MTASTSPolicy) MatchesMX(host string) bool {
	host = strings.TrimSuffix(strings.ToLower(host), ".")
	for _, pat := range p.MX {
		pat = strings.TrimSuffix(strings.ToLower(pat), ".")
		if rest, ok := strings.CutPrefix(pat, "*."); ok {
			label, parent, found := strings.Cut(host, ".")
			if found && label != "" && parent == rest {
				return true
			}
			continue
		}
		if pat == host {
			return true
		}
	}
	return false
}

// MTASTSPolicyStore keeps fetched MTA-STS policies for all nodes, so that a
// policy fetched by one is in force on every other and survives restarts
// (RFC 8461 §5.1: a cached policy stays in force until it expires).
type MTASTSPolicyStore interface {
	// MTASTSPolicy returns domain's cached policy, nil (and no error)
	// when none is cached.
	MTASTSPolicy(ctx context.Context, domain string) (*MTASTSPolicy, error)
	// PutMTASTSPolicy caches p, replacing domain's earlier policy.
	PutMTASTSPolicy(ctx context.Context, p *MTASTSPolicy) error
	// DeleteMTASTSPolicy forgets domain's policy (it published "none", or
	// its policy expired and no new one could be had).
	DeleteMTASTSPolicy(ctx context.Context, domain string) error
}

// MTASTSLookup is what delivery learns of a recipient domain's MTA-STS
// policy before an attempt.
type MTASTSLookup struct {
	// Policy is the policy in force (fetched now or cached), nil for
	// none.
	Policy *MTASTSPolicy
	// Failure is set when the domain announces a policy that could not be
	// fetched (TLSFailSTSPolicyFetch, TLSFailSTSWebPKIInvalid) or parsed
	// (TLSFailSTSPolicyInvalid) and no cached policy is in force; Detail
	// says why. The delivery goes on as if there were no policy (RFC 8461
	// §5), and the failure is reported.
	Failure TLSFailure
	Detail  string
}

// MTASTSPolicies finds the MTA-STS policy in force for a recipient domain
// (package mtasts): cached, looked up and fetched when due.
type MTASTSPolicies interface {
	// Lookup gives domain's policy. afterFailure says an earlier attempt
	// to the domain failed, so the TXT record is looked up again whatever
	// the cache's age (docs/api.md "TLS policy").
	Lookup(ctx context.Context, domain string, afterFailure bool) MTASTSLookup
}
