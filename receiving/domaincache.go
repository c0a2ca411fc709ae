package receiving

import (
	"context"
	"sync"
	"time"

	"github.com/mailroom/mailroom"
)

// DefaultCacheFor is how long a domain's receiving accounts are reused.
const DefaultCacheFor = 10 * time.Second

// maxCached bounds the cache: names asked at RCPT come from anyone, so
// a client naming many domains must not grow it without end.
const maxCached = 10000

// domainCache keeps the store's answer for a domain name briefly, so that
// a transaction's RCPTs and its DATA, and a burst of mail, ask once.
// A failed lookup is not kept.
type domainCache struct {
	mu      sync.Mutex
	entries map[string]cachedDomains
}

type cachedDomains struct {
	domains []mailroom.ReceivingDomain
	until   time.Time
}

func (rc *Receiver) receivingDomains(ctx context.Context, name string) ([]mailroom.ReceivingDomain, error) {
	if name == "" {
		return nil, nil
	}
	now := rc.now()
	c := &rc.domains
	c.mu.Lock()
	e, ok := c.entries[name]
	c.mu.Unlock()
	if ok && now.Before(e.until) {
		return e.domains, nil
	}
	ds, err := rc.Store.ReceivingDomains(ctx, name)
	if err != nil {
		return nil, err
	}
	ttl := rc.CacheFor
	if ttl <= 0 {
		ttl = DefaultCacheFor
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.entries == nil || len(c.entries) >= maxCached {
		c.entries = map[string]cachedDomains{}
	}
	c.entries[name] = cachedDomains{domains: ds, until: now.Add(ttl)}
	return ds, nil
}
