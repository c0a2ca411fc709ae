package delivery

import (
	"slices"
	"sync"
)

// destinations counts the deliveries in flight per recipient domain, so
// that claims can skip a domain whose receiver is slow instead of filling
// every message slot with mail that waits for it (docs/design.md "How mail is delivered": one slow
// receiver never stalls others).
type destinations struct {
	mu       sync.Mutex
	inFlight map[string]int
}

func (d *destinations) add(domain string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.inFlight == nil {
		d.inFlight = map[string]int{}
	}
	d.inFlight[domain]++
}

// done counts one delivery to domain finished, and reports whether that
// took the domain below limit: only then may a claim that skipped it find
// more to do.
func (d *destinations) done(domain string, limit int) (belowLimit bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	n := d.inFlight[domain] - 1
	if n <= 0 {
		delete(d.inFlight, domain)
	} else {
		d.inFlight[domain] = n
	}
	return n == limit-1
}

// busy lists the domains with at least limit deliveries in flight.
func (d *destinations) busy(limit int) []string {
	d.mu.Lock()
	defer d.mu.Unlock()
	var out []string
	for dom, n := range d.inFlight {
		if n >= limit {
			out = append(out, dom)
		}
	}
	slices.Sort(out)
	return out
}
