package smtp

import (
	"sync"
	"time"
)

// Bounds of what Direct remembers of servers whose TLS failed.
const (
	// tlsFailureMemory is how long a server whose TLS handshake failed is
	// sent mail in clear without trying STARTTLS again. A broken TLS stack
	// is rarely fixed within the hour, and in the meantime every session
	// would cost a failing handshake and a second connection; after it,
	// TLS is tried again, so a repaired server is encrypted again soon.
	tlsFailureMemory = time.Hour
	// maxTLSFailures caps the servers remembered, so that many broken
	// receivers (or a hostile domain's many MX addresses) cannot make the
	// memory grow without end. Forgetting one early costs only a failing
	// handshake.
	maxTLSFailures = 4096
)

// tlsMemory remembers, per server address (ip:port), until when its TLS is
// known to fail. It is keyed by address rather than MX name because the
// handshake is a property of the machine at that address: one name may
// stand for several machines, and only the broken one should go without
// TLS. It is safe for concurrent use.
type tlsMemory struct {
	ttl time.Duration
	max int
	// now is the clock, injected by tests.
	now func() time.Time

	mu    sync.Mutex
	until map[string]time.Time
}

func newTLSMemory(ttl time.Duration, max int) *tlsMemory {
	return &tlsMemory{ttl: ttl, max: max, now: time.Now, until: map[string]time.Time{}}
}

// failed reports whether addr's TLS failed within the memory's time, so
// that a new session to it should not try STARTTLS.
func (m *tlsMemory) failed(addr string) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	until, ok := m.until[addr]
	if ok && !m.now().Before(until) {
		delete(m.until, addr)
		return false
	}
	return ok
}

// remember records that addr's TLS failed now. When the memory is full,
// expired entries go first, and then the one that would expire soonest.
func (m *tlsMemory) remember(addr string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	now := m.now()
	if _, ok := m.until[addr]; !ok && len(m.until) >= m.max {
		m.evict(now)
	}
	m.until[addr] = now.Add(m.ttl)
}

// evict makes room for one entry. The scan is linear, but it only runs
// when a TLS failure is added to a full memory, which is rare. The caller
// holds m.mu.
func (m *tlsMemory) evict(now time.Time) {
	var soonest string
	for addr, until := range m.until {
		if !now.Before(until) {
			delete(m.until, addr)
			continue
		}
		if soonest == "" || until.Before(m.until[soonest]) {
			soonest = addr
		}
	}
	if len(m.until) >= m.max && soonest != "" {
		delete(m.until, soonest)
	}
}
