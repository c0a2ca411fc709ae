package domain

import (
	"fmt"
	"testing"
	"time"
)

// The cache of sending-domain answers stays within its bound whatever
// names a key asks about, and still answers the newest.
func TestDomainStatusCacheIsBounded(t *testing.T) {
	var c domainStatusCache
	now := time.Date(2026, 11, 27, 10, 0, 0, 0, time.UTC)
	for i := range 3 * maxCachedDomainStatuses {
		c.put("acct", fmt.Sprintf("d%d.example", i), cachedDomainStatus{}, now)
		if len(c.entries) > maxCachedDomainStatuses {
			t.Fatalf("%d entries after %d puts, bound %d", len(c.entries), i+1, maxCachedDomainStatuses)
		}
	}
	last := fmt.Sprintf("d%d.example", 3*maxCachedDomainStatuses-1)
	if _, ok := c.get("acct", last, now); !ok {
		t.Fatal("the newest answer was not kept")
	}
}
