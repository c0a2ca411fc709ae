package domain

import (
	"sync"
	"time"

	"github.com/mailroom/mailroom"
)

// SendingDomainCacheTTL is how long an answer of the sending-domain check
// is reused (docs/api.md "Domains"): a domain that another node, the
// command line or a scheduled check deletes or fails stops accepting sends
// within this time. A change made through this node's own domain Service
// (Delete, Verify) takes effect at once.
const SendingDomainCacheTTL = time.Second

// maxCachedDomainStatuses bounds the cache: a key may ask about any number
// of names it does not have, and each answer is an entry until it expires.
const maxCachedDomainStatuses = 10_000

// domainStatusCache keeps the sending-domain check's recent answers, so
// that a burst of sends from one domain costs one indexed read a second,
// not one a send (the read was a tenth of an accept's CPU).
type domainStatusCache struct {
	mu      sync.Mutex
	entries map[domainCacheKey]cachedDomainStatus
}

type domainCacheKey struct{ account, name string }

// cachedDomainStatus is a stored status, or found false for a name the
// account does not have.
type cachedDomainStatus struct {
	status   mailroom.DomainStatus
	tracking mailroom.Tracking
	found    bool
	expires  time.Time
}

// get returns the answer cached for the account's name at now, if fresh.
func (c *domainStatusCache) get(account, name string, now time.Time) (cachedDomainStatus, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.entries[domainCacheKey{account, name}]
	if !ok || !now.Before(e.expires) {
		return cachedDomainStatus{}, false
	}
	return e, true
}

// put keeps an answer read at now. A full cache starts over empty: it only
// saves reads, and starting over costs one read per name in use, where
// sweeping a full map on every put would cost the whole map each time.
func (c *domainStatusCache) put(account, name string, e cachedDomainStatus, now time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.entries == nil || len(c.entries) >= maxCachedDomainStatuses {
		c.entries = map[domainCacheKey]cachedDomainStatus{}
	}
	e.expires = now.Add(SendingDomainCacheTTL)
	c.entries[domainCacheKey{account, name}] = e
}

// forget drops the answer for the account's name: its domain changed here.
func (c *domainStatusCache) forget(account, name string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.entries, domainCacheKey{account, name})
}
