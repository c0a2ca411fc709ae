package mtasts

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"log/slog"
	"net"
	"net/http"
	"slices"
	"strings"
	"time"

	"golang.org/x/sync/singleflight"

	"github.com/mailroom/mailroom"
	"github.com/mailroom/mailroom/dns"
	"github.com/mailroom/mailroom/positive"
)

const (
	// DefaultPort is where policy hosts serve HTTPS (RFC 8461 §3.3).
	DefaultPort = 443
	// DefaultTimeout bounds one policy fetch (docs/api.md "TLS policy": a
	// 1-minute timeout).
	DefaultTimeout = time.Minute
	// CheckInterval is how long a policy, or a domain's having none, is
	// taken as known before the TXT record is looked up again
	// (docs/api.md: when the cached policy is older than an hour).
	CheckInterval = time.Hour
	// RetryInterval is how long a node waits before trying again after the
	// DNS could not answer or a policy could not be fetched, so that a
	// broken policy host is not asked once per delivery. An afterFailure
	// Lookup does not wait.
	RetryInterval = 5 * time.Minute
)

// Dialer opens the TCP connections of policy fetches (*net.Dialer does).
type Dialer interface {
	DialContext(ctx context.Context, network, address string) (net.Conn, error)
}

// Options configure Policies; zero values take the defaults.
type Options struct {
	// Resolver answers every DNS question: the TXT record and the policy
	// host's addresses (--dns-server). Nil asks the first server of
	// /etc/resolv.conf, as dns.Resolver's zero value does.
	Resolver *dns.Resolver
	// Store keeps the policies for all nodes. Required.
	Store mailroom.MTASTSPolicyStore
	// RootCAs verify the policy hosts' certificates. Nil means the
	// system's roots, which crypto/x509 on Linux (and other Unix but
	// macOS) reads from the locations SSL_CERT_FILE and SSL_CERT_DIR
	// name when set (see x509.SystemCertPool's documentation), so that
	// tests and closed networks bring their own CA. The system pool is
	// read once per process: set the variables before the first fetch.
	RootCAs *x509.CertPool
	// Port is the policy hosts' HTTPS port: DefaultPort unless a test
	// serves elsewhere. The URL, the Host header and the certificate name
	// stay mta-sts.<domain>.
	Port int
	// Timeout bounds one fetch, connecting to reading: DefaultTimeout.
	Timeout time.Duration
	// Now is the clock of the cache (fetched, checked, expired);
	// time.Now when nil. Certificates are verified at the real time.
	Now func() time.Time
	// Log receives what went wrong with a lookup, fetch or the store;
	// nil discards it.
	Log *slog.Logger
	// Dialer opens the connections to policy hosts; a *net.Dialer when nil.
	Dialer Dialer
}

// Policies finds recipient domains' MTA-STS policies: discovered, fetched,
// cached in the store for all nodes and in memory in front of it. It
// implements mailroom.MTASTSPolicies and is safe for concurrent use.
type Policies struct {
	resolver *dns.Resolver
	store    mailroom.MTASTSPolicyStore
	dialer   Dialer
	client   *http.Client
	port     int
	timeout  time.Duration
	now      func() time.Time
	log      *slog.Logger
	memo     *memo
	flight   singleflight.Group
}

var _ mailroom.MTASTSPolicies = (*Policies)(nil)

// New returns Policies configured by opts.
func New(opts Options) *Policies {
	p := &Policies{
		resolver: opts.Resolver,
		store:    opts.Store,
		dialer:   opts.Dialer,
		port:     positive.Or(opts.Port, DefaultPort),
		timeout:  positive.Or(opts.Timeout, DefaultTimeout),
		now:      opts.Now,
		log:      opts.Log,
		memo:     newMemo(memoEntries),
	}
	if p.resolver == nil {
		p.resolver = &dns.Resolver{}
	}
	if p.dialer == nil {
		p.dialer = &net.Dialer{}
	}
	if p.now == nil {
		p.now = time.Now
	}
	if p.log == nil {
		p.log = slog.New(slog.DiscardHandler)
	}
	tlsConfig := &tls.Config{RootCAs: opts.RootCAs, MinVersion: tls.VersionTLS12}
	p.client = newClient(p.dialPolicyHost, tlsConfig, p.timeout)
	return p
}

// Lookup gives domain's policy in force (mailroom.MTASTSPolicies). While
// nothing is due it answers from memory, without DNS or store; otherwise
// (or when afterFailure) it looks up the TXT record and fetches what it
// names, one lookup per domain at a time across concurrent callers. The
// domain is in A-labels (as mailroom.MTASTSPolicy.Domain); a name that is
// not a host name has no policy. A caller whose ctx ends while waiting gets
// what memory holds; the lookup goes on for the others and the cache.
func (p *Policies) Lookup(ctx context.Context, domain string, afterFailure bool) mailroom.MTASTSLookup {
	domain = strings.TrimSuffix(strings.ToLower(domain), ".")
	if !validMXPattern(domain) || strings.HasPrefix(domain, "*.") {
		return mailroom.MTASTSLookup{}
	}
	if e, ok := p.memo.get(domain); ok && !afterFailure && p.fresh(e) {
		return e.lookup()
	}
	key := domain
	if afterFailure {
		key += "\x00after-failure"
	}
	ch := p.flight.DoChan(key, func() (any, error) {
		// The first caller's cancellation must not fail the others
		// waiting on this flight; the fetch and the resolver bound it.
		ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*p.timeout)
		defer cancel()
		return p.refresh(ctx, domain, afterFailure), nil
	})
	select {
	case res := <-ch:
		return res.Val.(entry).lookup()
	case <-ctx.Done():
		// The caller gives up; what memory holds is the best answer.
		if e, ok := p.memo.get(domain); ok && (e.policy == nil || p.now().Before(e.policy.ExpiresAt())) {
			return e.lookup()
		}
		return mailroom.MTASTSLookup{}
	}
}

// fresh: nothing about e is due, and its policy has not expired.
func (p *Policies) fresh(e entry) bool {
	now := p.now()
	return now.Before(e.nextCheck) && (e.policy == nil || now.Before(e.policy.ExpiresAt()))
}

// lookup is the answer e gives; each caller gets its own copy of the
// policy.
func (e entry) lookup() mailroom.MTASTSLookup {
	if e.policy == nil {
		return mailroom.MTASTSLookup{Failure: e.failure, Detail: e.detail}
	}
	pol := *e.policy
	pol.MX = slices.Clone(pol.MX)
	return mailroom.MTASTSLookup{Policy: &pol}
}

// refresh finds domain's policy the slow way and remembers the answer
// (the cache rules of doc.go).
func (p *Policies) refresh(ctx context.Context, domain string, force bool) entry {
	now := p.now()
	remember := func(e entry) entry {
		e.domain = domain
		p.memo.put(e)
		return e
	}
	prev, _ := p.memo.get(domain)

	// The store first: another node may have fetched or confirmed the
	// policy since this one last looked.
	cached, err := p.store.MTASTSPolicy(ctx, domain)
	if err != nil {
		p.log.Warn("mta-sts: reading the cached policy failed; using this node's copy", "domain", domain, "err", err)
		cached = prev.policy
	}
	expired := cached != nil && !now.Before(cached.ExpiresAt())
	if expired {
		cached = nil
	}
	if cached != nil && !force && now.Sub(cached.CheckedAt) < CheckInterval {
		return remember(entry{policy: cached, nextCheck: cached.CheckedAt.Add(CheckInterval)})
	}

	rec, found, err := p.discover(ctx, domain)
	switch found {
	case unknown:
		p.log.Warn("mta-sts: looking up the TXT record failed; keeping what is cached", "domain", domain,
			"cached", cached != nil, "err", err)
		return remember(entry{policy: cached, nextCheck: now.Add(RetryInterval)})
	case absent:
		// RFC 8461 §5.1: a cached policy stays in force until it
		// expires, even when the record is gone.
		if err != errNoRecord {
			p.log.Info("mta-sts: no usable TXT record", "domain", domain, "err", err)
		}
		if expired {
			p.forget(ctx, domain)
		}
		return remember(entry{policy: cached, nextCheck: now.Add(CheckInterval)})
	}

	if cached != nil && cached.ID == rec.ID {
		confirmed := *cached
		confirmed.CheckedAt = now
		if err := p.store.PutMTASTSPolicy(ctx, &confirmed); err != nil {
			p.log.Warn("mta-sts: storing the policy's check failed", "domain", domain, "err", err)
		}
		return remember(entry{policy: &confirmed, nextCheck: now.Add(CheckInterval)})
	}
	if cached == nil && prev.noneID == rec.ID {
		return remember(entry{noneID: rec.ID, nextCheck: now.Add(CheckInterval)})
	}

	pol, text, ferr := p.fetch(ctx, domain)
	if ferr != nil {
		if cached != nil {
			// RFC 8461 §5.1: a policy that could not be refreshed stays
			// in force until it expires.
			p.log.Warn("mta-sts: fetching the new policy failed; the cached one stays in force", "domain", domain,
				"id", rec.ID, "cached_id", cached.ID, "failure", string(ferr.failure), "detail", ferr.detail)
			return remember(entry{policy: cached, nextCheck: now.Add(RetryInterval)})
		}
		p.log.Warn("mta-sts: fetching the policy failed; delivering as without one", "domain", domain,
			"id", rec.ID, "failure", string(ferr.failure), "detail", ferr.detail)
		if expired {
			p.forget(ctx, domain)
		}
		return remember(entry{failure: ferr.failure, detail: ferr.detail, nextCheck: now.Add(RetryInterval)})
	}
	if pol.Mode == mailroom.MTASTSNone {
		// RFC 8461 §8.3: mode none withdraws the policy; the cached one
		// goes.
		p.forget(ctx, domain)
		return remember(entry{noneID: rec.ID, nextCheck: now.Add(CheckInterval)})
	}
	fetched := &mailroom.MTASTSPolicy{Domain: domain, ID: rec.ID, Mode: pol.Mode, MX: pol.MX, MaxAge: pol.MaxAge,
		Text: text, FetchedAt: now, CheckedAt: now}
	if err := p.store.PutMTASTSPolicy(ctx, fetched); err != nil {
		p.log.Warn("mta-sts: storing the policy failed; this node applies it", "domain", domain, "err", err)
	}
	p.log.Info("mta-sts: policy fetched", "domain", domain, "id", rec.ID, "mode", string(pol.Mode), "max_age", pol.MaxAge)
	return remember(entry{policy: fetched, nextCheck: now.Add(CheckInterval)})
}

// forget deletes domain's stored policy (withdrawn, or expired with none
// to replace it).
func (p *Policies) forget(ctx context.Context, domain string) {
	if err := p.store.DeleteMTASTSPolicy(ctx, domain); err != nil {
		p.log.Warn("mta-sts: deleting the cached policy failed", "domain", domain, "err", err)
	}
}
