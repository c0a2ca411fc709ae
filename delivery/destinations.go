package delivery

import (
	"slices"
	"sync"
	"time"

	"github.com/mailroom/mailroom"
)

// destinations counts the deliveries in flight per recipient domain, so
// that claims can skip a destination that has its fill instead of filling
// every message slot with mail that waits for it (docs/design.md "How mail
// is delivered": one slow receiver never stalls others).
//
// A destination is a recipient domain's site (docs/api.md "How mail
// leaves") once the transport has found it: the thousands of domains one
// provider hosts share one count, capped at the site's Capacity, and wait
// together while it is throttled or suspended. A domain whose site is not
// known yet is a destination of its own, capped at PerDestination, until a
// delivery finds its MX hosts; from then on its deliveries in flight,
// those claimed before too, count toward its site.
type destinations struct {
	// sites is nil without site limits (relay and capture): then every
	// destination is a domain.
	sites mailroom.Sites

	mu       sync.Mutex
	inFlight map[string]int // by domain
	// siteOf is each domain's site as deliveries found it, and seen when
	// it was last claimed or delivered to: a domain whose mail stopped
	// coming is forgotten after domainIdle, not named in every claim.
	siteOf map[string]siteSeen
}

type siteSeen struct {
	site string
	seen time.Time
}

// domainIdle is how long a domain's site is remembered after the domain
// was last seen.
const domainIdle = time.Hour

// add counts a delivery to domain claimed at now.
func (d *destinations) add(domain string, now time.Time) {
	if d.sites != nil {
		if site, ok := d.sites.SiteOf(domain); ok {
			d.learn(domain, site, now)
		}
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.inFlight == nil {
		d.inFlight = map[string]int{}
	}
	d.inFlight[domain]++
}

// learn notes that domain's site is site, as a delivery to it found at
// now: from then on claims count and skip the domain with its site.
func (d *destinations) learn(domain, site string, now time.Time) {
	if site == "" {
		return
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.siteOf == nil {
		d.siteOf = map[string]siteSeen{}
	}
	d.siteOf[domain] = siteSeen{site, now}
}

// done counts one delivery to domain finished, and reports whether that
// took its destination below its limit: only then may a claim that
// skipped it find more to do.
func (d *destinations) done(domain string, perDomain int) (belowLimit bool) {
	d.mu.Lock()
	n := d.inFlight[domain] - 1
	if n <= 0 {
		delete(d.inFlight, domain)
	} else {
		d.inFlight[domain] = n
	}
	s, known := d.siteOf[domain]
	if known && d.sites != nil {
		n = d.siteCount(s.site)
	}
	d.mu.Unlock()
	if !known || d.sites == nil {
		return n == perDomain-1
	}
	return n == max(1, d.sites.Capacity(s.site))-1
}

// siteCount is the deliveries in flight to site's domains. The caller
// holds d.mu.
func (d *destinations) siteCount(site string) int {
	n := 0
	for dom, c := range d.inFlight {
		if s, ok := d.siteOf[dom]; ok && s.site == site {
			n += c
		}
	}
	return n
}

// busy lists the recipient domains not to claim now: those of sites with
// their fill in flight or not ready (throttled to a later place, or
// suspended), and domains of no known site with perDomain in flight. wake
// is the earliest time a site that is not ready becomes so (zero if none).
func (d *destinations) busy(perDomain int, now time.Time) (skip []string, wake time.Time) {
	d.mu.Lock()
	perSite := map[string]int{}
	for dom, s := range d.siteOf {
		if now.Sub(s.seen) > domainIdle && d.inFlight[dom] == 0 {
			delete(d.siteOf, dom)
			continue
		}
		perSite[s.site] += 0 // a site with nothing in flight may still be throttled or suspended
	}
	for dom, n := range d.inFlight {
		if s, ok := d.siteOf[dom]; ok && d.sites != nil {
			perSite[s.site] += n
		} else if n >= perDomain {
			skip = append(skip, dom)
		}
	}
	d.mu.Unlock()
	if d.sites == nil {
		slices.Sort(skip)
		return skip, time.Time{}
	}
	full := map[string]bool{}
	for site, n := range perSite {
		ready := d.sites.ReadyAt(site, now)
		switch {
		case ready.After(now):
			full[site] = true
			if wake.IsZero() || ready.Before(wake) {
				wake = ready
			}
		case n >= max(1, d.sites.Capacity(site)):
			full[site] = true
		}
	}
	if len(full) > 0 {
		d.mu.Lock()
		for dom, s := range d.siteOf {
			if full[s.site] {
				skip = append(skip, dom)
			}
		}
		d.mu.Unlock()
	}
	slices.Sort(skip)
	return slices.Compact(skip), wake
}
