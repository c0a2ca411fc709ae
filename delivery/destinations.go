package delivery

import (
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/mailroom/mailroom"
)

// destinations counts the deliveries in flight per destination, so that
// claims can skip a destination that has its fill instead of filling every
// message slot with mail that waits for it (docs/design.md "How mail is
// delivered": one slow receiver never stalls others).
//
// A destination is a recipient domain's site (docs/api.md "How mail
// leaves") once the transport has found it, so that the thousands of
// domains one provider hosts share one count, capped at the site's
// Capacity, and wait together while it is throttled or suspended. A domain
// whose site is not known yet is a destination of its own, capped at
// PerDestination, until its first delivery finds its MX hosts.
type destinations struct {
	// sites is nil without site limits (relay and capture): then every
	// destination is a domain.
	sites mailroom.Sites

	mu       sync.Mutex
	inFlight map[string]int
	// domains are the recipient domains seen per site, the names claims
	// skip while the site is full; lastSeen bounds how long one is kept.
	domains map[string]map[string]time.Time
}

// key is domain's destination, the count it adds to, as of now.
func (d *destinations) key(domain string, now time.Time) string {
	if d.sites != nil {
		if site, ok := d.sites.SiteOf(domain); ok {
			d.learn(domain, site, now)
			return "site:" + site
		}
	}
	return "domain:" + domain
}

// learn notes that domain's site is site, as a delivery to it found at
// now: from then on claims skip the domain while the site is full.
func (d *destinations) learn(domain, site string, now time.Time) {
	if site == "" {
		return
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.domains == nil {
		d.domains = map[string]map[string]time.Time{}
	}
	if d.domains[site] == nil {
		d.domains[site] = map[string]time.Time{}
	}
	d.domains[site][domain] = now
}

func (d *destinations) add(key string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.inFlight == nil {
		d.inFlight = map[string]int{}
	}
	d.inFlight[key]++
}

// done counts one delivery to key finished, and reports whether that took
// it below its limit: only then may a claim that skipped it find more to
// do.
func (d *destinations) done(key string, perDomain int) (belowLimit bool) {
	limit := d.limit(key, perDomain)
	d.mu.Lock()
	defer d.mu.Unlock()
	n := d.inFlight[key] - 1
	if n <= 0 {
		delete(d.inFlight, key)
	} else {
		d.inFlight[key] = n
	}
	return n == limit-1
}

// limit is how many deliveries key may have in flight: its site's
// Capacity, or perDomain for a domain.
func (d *destinations) limit(key string, perDomain int) int {
	if site, ok := strings.CutPrefix(key, "site:"); ok && d.sites != nil {
		return max(1, d.sites.Capacity(site))
	}
	return perDomain
}

// domainIdle is how long a domain stays in its site's skip list after it
// was last claimed: a domain whose mail stopped coming is not named in
// every claim forever.
const domainIdle = time.Hour

// busy lists the recipient domains not to claim now: those of sites with
// their fill in flight or not ready (throttled to a later place, or
// suspended), and domains of no known site with perDomain in flight. wake
// is the earliest time a site that is not ready becomes so (zero if none).
func (d *destinations) busy(perDomain int, now time.Time) (skip []string, wake time.Time) {
	type siteCount struct {
		site string
		n    int
	}
	d.mu.Lock()
	var sites []siteCount
	for key, n := range d.inFlight {
		if dom, ok := strings.CutPrefix(key, "domain:"); ok {
			if n >= perDomain {
				skip = append(skip, dom)
			}
			continue
		}
		site, _ := strings.CutPrefix(key, "site:")
		sites = append(sites, siteCount{site, n})
	}
	// A site with nothing in flight may still be throttled or suspended.
	for site := range d.domains {
		if d.inFlight["site:"+site] == 0 {
			sites = append(sites, siteCount{site, 0})
		}
	}
	d.mu.Unlock()
	if d.sites == nil {
		slices.Sort(skip)
		return skip, time.Time{}
	}
	var full []string
	for _, s := range sites {
		ready := d.sites.ReadyAt(s.site, now)
		switch {
		case ready.After(now):
			full = append(full, s.site)
			if wake.IsZero() || ready.Before(wake) {
				wake = ready
			}
		case s.n >= max(1, d.sites.Capacity(s.site)):
			full = append(full, s.site)
		}
	}
	d.mu.Lock()
	for _, site := range full {
		for dom, seen := range d.domains[site] {
			if now.Sub(seen) > domainIdle {
				delete(d.domains[site], dom)
				continue
			}
			skip = append(skip, dom)
		}
		if len(d.domains[site]) == 0 {
			delete(d.domains, site)
		}
	}
	d.mu.Unlock()
	slices.Sort(skip)
	return slices.Compact(skip), wake
}
