package smtp

import (
	"sync"
	"time"

	"github.com/mailroom/mailroom"
)

// testSites is a minimal mailroom.Sites for these tests while package
// sites' Tracker is written: the policy's profiles; a connection limit per
// key, the profile's until a 421 on connecting lowers it to the
// connections then open (or the test sets it); rate places and
// suspensions as the test sets them; and a record of every event.
type testSites struct {
	policy mailroom.DeliveryPolicy

	mu       sync.Mutex
	domains  map[string]string
	profiles map[string]mailroom.SiteProfile
	limit    map[connKey]int
	open     map[connKey]int
	events   []keyedEvent
	// suspended holds keys suspended until a time; the zero key suspends
	// every key.
	suspended map[connKey]time.Time
	// place, when set, gives each reservation's time; else now.
	place     func(now time.Time) time.Time
	cancelled int
	readyAt   time.Time
	changed   chan struct{}
}

type keyedEvent struct {
	Key connKey
	mailroom.SiteEvent
}

func newTestSites(profiles ...mailroom.SiteProfile) *testSites {
	return &testSites{
		policy:    mailroom.DeliveryPolicy{Default: mailroom.DefaultSiteProfile, Sites: profiles},
		domains:   map[string]string{},
		profiles:  map[string]mailroom.SiteProfile{},
		limit:     map[connKey]int{},
		open:      map[connKey]int{},
		suspended: map[connKey]time.Time{},
		changed:   make(chan struct{}, 1),
	}
}

var _ mailroom.Sites = (*testSites)(nil)

func (s *testSites) Site(domain string, mx []string) mailroom.SiteProfile {
	p := s.policy.Site(domain, mx)
	s.mu.Lock()
	defer s.mu.Unlock()
	s.domains[domain] = p.Name
	s.profiles[p.Name] = p
	return p
}

func (s *testSites) SiteOf(domain string) (string, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	site, ok := s.domains[domain]
	return site, ok
}

func (s *testSites) MaxConnections(key connKey) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	if n, ok := s.limit[key]; ok {
		return n
	}
	return s.profiles[key.Site].MaxConnections
}

func (s *testSites) setLimit(key connKey, n int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.limit[key] = n
}

func (s *testSites) Reserve(key connKey, now time.Time) mailroom.SiteReservation {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, k := range []connKey{key, {}} {
		if until := s.suspended[k]; until.After(now) {
			return mailroom.SiteReservation{SuspendedUntil: until}
		}
	}
	at := now
	if s.place != nil {
		at = s.place(now)
	}
	return mailroom.SiteReservation{At: at, Cancel: func() {
		s.mu.Lock()
		defer s.mu.Unlock()
		s.cancelled++
	}}
}

func (s *testSites) Observe(key connKey, e mailroom.SiteEvent) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.events = append(s.events, keyedEvent{key, e})
	switch e.Kind {
	case mailroom.SiteConnected:
		s.open[key]++
	case mailroom.SiteDisconnected:
		s.open[key]--
	case mailroom.SiteThrottledOnConnect:
		s.limit[key] = max(1, s.open[key])
	}
}

func (s *testSites) Capacity(site string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.profiles[site].MaxConnections
}

func (s *testSites) ReadyAt(string, time.Time) time.Time {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.readyAt
}

func (s *testSites) Changed() <-chan struct{} { return s.changed }

// eventsOf are the events of a kind so far.
func (s *testSites) eventsOf(kind mailroom.SiteEventKind) []keyedEvent {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []keyedEvent
	for _, e := range s.events {
		if e.Kind == kind {
			out = append(out, e)
		}
	}
	return out
}

// openNow is how many connections of key the site was told are open.
func (s *testSites) openNow(key connKey) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.open[key]
}
