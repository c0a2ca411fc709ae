package mtasts

import (
	"container/list"
	"sync"
	"time"

	"github.com/mailroom/mailroom"
)

// memoEntries bounds the in-memory cache: one entry per recipient domain
// recently mailed, the least recently used forgotten first. The store
// keeps every policy; forgetting an entry costs one store read.
const memoEntries = 10000

// entry is what a node remembers of a domain between lookups, so that a
// delivery costs neither a DNS query nor a store read while nothing is due.
type entry struct {
	domain string
	// policy is the policy in force, nil for none.
	policy *mailroom.MTASTSPolicy
	// failure and detail: a policy announced that could not be had, with
	// none cached (fetchError).
	failure mailroom.TLSFailure
	detail  string
	// noneID is the TXT id whose policy said mode none, so that it is not
	// fetched again until the id changes.
	noneID string
	// nextCheck is when the TXT record is to be looked up again (an
	// afterFailure Lookup does not wait for it).
	nextCheck time.Time
}

// memo is a bounded least-recently-used map of domain to entry.
type memo struct {
	mu    sync.Mutex
	max   int
	order *list.List // of *entry, most recently used first
	byKey map[string]*list.Element
}

func newMemo(max int) *memo {
	return &memo{max: max, order: list.New(), byKey: map[string]*list.Element{}}
}

// get returns a copy of domain's entry, or false.
func (m *memo) get(domain string) (entry, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	el, ok := m.byKey[domain]
	if !ok {
		return entry{}, false
	}
	m.order.MoveToFront(el)
	return *el.Value.(*entry), true
}

func (m *memo) put(e entry) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if el, ok := m.byKey[e.domain]; ok {
		*el.Value.(*entry) = e
		m.order.MoveToFront(el)
		return
	}
	m.byKey[e.domain] = m.order.PushFront(&e)
	for m.order.Len() > m.max {
		last := m.order.Back()
		m.order.Remove(last)
		delete(m.byKey, last.Value.(*entry).domain)
	}
}

func (m *memo) len() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.order.Len()
}
