package sites

import (
	"log/slog"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/mailroom/mailroom"
)

// Options are what a Tracker needs beyond the policy.
type Options struct {
	// Nodes is the count of live nodes, for each node's share of a site's
	// limits; nil means 1. It is asked at start and at each sync.
	Nodes func() int
	// Store keeps suspensions for every node; nil: suspensions are this
	// node's alone.
	Store mailroom.SiteSuspensionStore
	// Now is the clock; nil is time.Now.
	Now func() time.Time
	Log *slog.Logger
}

// Tracker holds every site key's state. It implements mailroom.Sites; its
// methods are safe for concurrent use. One mutex guards it all: every
// operation is a few map lookups and arithmetic, far below the cost of the
// SMTP transaction it is asked about.
type Tracker struct {
	opts    Options
	now     func() time.Time
	log     *slog.Logger
	changed chan struct{}
	// wake asks Run to write a new suspension now rather than at the next
	// tick.
	wake chan struct{}

	mu     sync.Mutex
	policy mailroom.DeliveryPolicy
	nodes  int
	// domains maps a recipient domain to its site, and sites each site's
	// profile and MX hosts.
	domains map[string]*domainEntry
	sites   map[string]*siteEntry
	// keys holds each site's keys by source address.
	keys map[string]map[string]*keyState
	// known are the store's suspensions as last read, by key: those in
	// force and those of the last SuspensionMemory, whose level the next
	// one doubles.
	known map[mailroom.SiteKey]mailroom.SiteSuspension
	// pending are suspensions not yet written to the store.
	pending map[mailroom.SiteKey]mailroom.SiteSuspension
}

type domainEntry struct {
	site     string
	mx       []string
	lastUsed time.Time
}

type siteEntry struct {
	profile  mailroom.SiteProfile
	mx       []string
	lastUsed time.Time
}

// maxSiteMX bounds the MX hosts a site remembers for the snapshot: a site
// such as Microsoft 365's has a host per tenant.
const maxSiteMX = 16

// New returns a tracker that applies policy. Run keeps it in step with the
// other nodes.
func New(policy mailroom.DeliveryPolicy, opts Options) *Tracker {
	t := &Tracker{
		opts:    opts,
		now:     opts.Now,
		log:     opts.Log,
		changed: make(chan struct{}, 1),
		wake:    make(chan struct{}, 1),
		policy:  policy,
		nodes:   1,
		domains: map[string]*domainEntry{},
		sites:   map[string]*siteEntry{},
		keys:    map[string]map[string]*keyState{},
		known:   map[mailroom.SiteKey]mailroom.SiteSuspension{},
		pending: map[mailroom.SiteKey]mailroom.SiteSuspension{},
	}
	if t.now == nil {
		t.now = time.Now
	}
	if t.log == nil {
		t.log = slog.Default()
	}
	if opts.Nodes != nil {
		t.nodes = max(1, opts.Nodes())
	}
	return t
}

// Changed is signalled when a site gets room again: a suspension ended or
// was lifted, a limit was raised, the policy was reloaded.
func (t *Tracker) Changed() <-chan struct{} { return t.changed }

func (t *Tracker) signal() {
	select {
	case t.changed <- struct{}{}:
	default:
	}
}

// Site returns the profile of domain, whose MX hosts are mx, and remembers
// the domain's site for SiteOf and the hosts for the snapshot.
func (t *Tracker) Site(domain string, mx []string) mailroom.SiteProfile {
	now := t.now()
	t.mu.Lock()
	defer t.mu.Unlock()
	p := t.policy.Site(domain, mx)
	t.domains[canonical(domain)] = &domainEntry{site: p.Name, mx: slices.Clone(mx), lastUsed: now}
	s := t.siteEntry(p)
	s.lastUsed = now
	for _, h := range mx {
		h = canonical(h)
		if len(s.mx) < maxSiteMX && !slices.Contains(s.mx, h) {
			s.mx = append(s.mx, h)
			slices.Sort(s.mx)
		}
	}
	return p
}

// SiteOf is the site Site last found for domain.
func (t *Tracker) SiteOf(domain string) (string, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	d, ok := t.domains[canonical(domain)]
	if !ok {
		return "", false
	}
	return d.site, true
}

// siteEntry returns the entry of p's site, made or updated with p. t.mu
// must be held.
func (t *Tracker) siteEntry(p mailroom.SiteProfile) *siteEntry {
	s := t.sites[p.Name]
	if s == nil {
		s = &siteEntry{}
		t.sites[p.Name] = s
	}
	s.profile = p
	return s
}

// profileOf is the profile of the site named site: as Site last found it,
// else the policy's profile of that name, else the default profile (a site
// named by its MX hosts). t.mu must be held.
func (t *Tracker) profileOf(site string) mailroom.SiteProfile {
	if s := t.sites[site]; s != nil {
		return s.profile
	}
	return t.namedProfile(site)
}

func (t *Tracker) namedProfile(site string) mailroom.SiteProfile {
	for _, p := range t.policy.Sites {
		if p.Name == site {
			return p
		}
	}
	p := t.policy.Default
	p.Name = site
	return p
}

// connShare and rateShare are this node's part of p's limits.
func (t *Tracker) connShare(p mailroom.SiteProfile) int {
	return max(1, p.MaxConnections/t.nodes)
}

func (t *Tracker) rateShare(p mailroom.SiteProfile) float64 {
	return max(0, p.MaxRate) / float64(t.nodes)
}

// key returns key's state, made with its profile's shares when it is new.
// t.mu must be held.
func (t *Tracker) key(key mailroom.SiteKey, now time.Time) *keyState {
	bySource := t.keys[key.Site]
	if bySource == nil {
		bySource = map[string]*keyState{}
		t.keys[key.Site] = bySource
	}
	k := bySource[key.Source]
	if k == nil {
		p := t.profileOf(key.Site)
		k = newKeyState(key, now, t.connShare(p), t.rateShare(p))
		if s, ok := t.known[key]; ok {
			k.adopt(s, now)
		}
		bySource[key.Source] = k
	}
	k.lastUsed = later(k.lastUsed, now)
	return k
}

// SetPolicy puts p in force (SIGHUP). Each domain's site is found again
// with the MX hosts it was last seen with, and each key takes its profile's
// new shares, keeping what it learned where that is still below them: a
// lowered connection limit or rate stays lowered (within the new share), a
// limit at the old share moves to the new one.
func (t *Tracker) SetPolicy(p mailroom.DeliveryPolicy) {
	now := t.now()
	t.mu.Lock()
	t.policy = p
	for domain, d := range t.domains {
		prof := p.Site(domain, d.mx)
		d.site = prof.Name
		t.siteEntry(prof)
	}
	// A site no domain leads to any more keeps its name, with the
	// policy's profile of that name or the default's limits.
	for name, s := range t.sites {
		s.profile = t.namedProfile(name)
	}
	t.reshareAll(now)
	t.mu.Unlock()
	t.signal()
}

// reshareAll gives every key its profile's shares. t.mu must be held.
func (t *Tracker) reshareAll(now time.Time) {
	for site, bySource := range t.keys {
		p := t.profileOf(site)
		for _, k := range bySource {
			k.reshare(now, t.connShare(p), t.rateShare(p))
		}
	}
}

// setNodes takes a new live-node count: each key's shares follow.
func (t *Tracker) setNodes(n int, now time.Time) {
	n = max(1, n)
	t.mu.Lock()
	if n == t.nodes {
		t.mu.Unlock()
		return
	}
	fewer := n < t.nodes
	t.nodes = n
	t.reshareAll(now)
	t.mu.Unlock()
	if fewer {
		t.signal()
	}
}

func canonical(name string) string {
	return strings.TrimSuffix(strings.ToLower(strings.TrimSpace(name)), ".")
}

func later(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}
