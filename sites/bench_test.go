package sites

import (
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mailroom/mailroom"
)

// BenchmarkReserveObserve is one transaction's calls (Reserve, then
// Delivered) from many goroutines at once over 50 sites of 2 source
// addresses, with a throttle now and then: the contention the transport's
// connections put on the tracker's lock.
func BenchmarkReserveObserve(b *testing.B) {
	c := newClock()
	tr := newTracker(b, c, Options{})
	var keys []mailroom.SiteKey
	for i := range 50 {
		for _, src := range []string{"192.0.2.1", "192.0.2.2"} {
			keys = append(keys, mailroom.SiteKey{Site: fmt.Sprintf("mx.site%d.test", i), Source: src})
		}
	}
	var n atomic.Uint64
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			i := n.Add(1)
			key := keys[i%uint64(len(keys))]
			now := c.Now()
			r := tr.Reserve(key, now)
			if i%997 == 0 {
				tr.Observe(key, mailroom.SiteEvent{Kind: mailroom.SiteThrottled, At: now, Code: 421})
				r.Cancel()
				continue
			}
			tr.Observe(key, mailroom.SiteEvent{Kind: mailroom.SiteDelivered, At: now})
			if i%100 == 0 {
				c.Advance(time.Millisecond)
			}
		}
	})
}
