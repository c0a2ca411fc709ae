package tracking

import (
	"net/netip"
	"sync"
	"time"

	"golang.org/x/time/rate"

	"github.com/mailroom/mailroom"
)

// Limits bound what one client network, and all of them together, may
// record on a node: anyone may request a tracking address, with no key,
// so a script replaying a link, or a scanner farm, must not write events
// (and webhook deliveries) without end. Over the limit, the click still redirects and the pixel still
// answers: only the recording is left out.
type Limits struct {
	// PerSecond and Burst are each client network's token bucket: a
	// network is an IPv4 /24 or an IPv6 /48, the part of an address
	// events keep (mailroom.TruncateIP), since one host of either holds
	// many addresses.
	PerSecond float64
	Burst     int
	// Clients bounds the networks remembered at once, so that memory is
	// bounded whatever the number of addresses asking.
	Clients int
	// TotalPerSecond and TotalBurst are the node's bucket across every
	// network: one who holds many networks (an IPv6 /32 holds 65,536
	// /48s) gets no more recordings than that, so the store's writes
	// from tracking are bounded whoever asks.
	TotalPerSecond float64
	TotalBurst     int
}

// DefaultLimits: 10 recordings a second per network, 50 at once; a
// reader clicks far less, a mail provider's proxy fetching the pixels of
// many readers at once stays under it for a few at a time, and 100,000
// networks take about 20 MB. A node records at most 500 a second, 2,000
// at once, from all networks: the opens of a newsletter to a million
// readers come over hours, and a group commit writes that many easily.
var DefaultLimits = Limits{PerSecond: 10, Burst: 50, Clients: 100_000, TotalPerSecond: 500, TotalBurst: 2000}

// clientLimiter keeps a token bucket per client network in two
// generations: when the current one is full, it becomes the previous one
// and the previous one is dropped, so that at most Clients buckets are
// held and a network that keeps asking keeps its bucket (it moves to the
// current generation when found in the previous one). A network
// forgotten gets a full bucket again, which only lets through what a new
// network could.
type clientLimiter struct {
	limits Limits
	total  *rate.Limiter

	mu       sync.Mutex
	current  map[netip.Prefix]*rate.Limiter
	previous map[netip.Prefix]*rate.Limiter
}

// newClientLimiter fills each part of l left zero with DefaultLimits'.
func newClientLimiter(l Limits) *clientLimiter {
	d := DefaultLimits
	if l.PerSecond <= 0 || l.Burst <= 0 {
		l.PerSecond, l.Burst = d.PerSecond, d.Burst
	}
	if l.Clients <= 0 {
		l.Clients = d.Clients
	}
	if l.TotalPerSecond <= 0 || l.TotalBurst <= 0 {
		l.TotalPerSecond, l.TotalBurst = d.TotalPerSecond, d.TotalBurst
	}
	return &clientLimiter{limits: l, total: rate.NewLimiter(rate.Limit(l.TotalPerSecond), l.TotalBurst),
		current: map[netip.Prefix]*rate.Limiter{}}
}

// allow takes one recording of client's network, and of the node's
// bucket, at now: a network over its limit takes nothing of the node's.
func (c *clientLimiter) allow(client netip.Addr, now time.Time) bool {
	key := network(client)
	c.mu.Lock()
	defer c.mu.Unlock()
	lim := c.current[key]
	if lim == nil {
		if lim = c.previous[key]; lim == nil {
			lim = rate.NewLimiter(rate.Limit(c.limits.PerSecond), c.limits.Burst)
		}
		if len(c.current) >= max(1, c.limits.Clients/2) {
			c.previous, c.current = c.current, map[netip.Prefix]*rate.Limiter{}
		}
		c.current[key] = lim
	}
	return lim.AllowN(now, 1) && c.total.AllowN(now, 1)
}

// network is the /24 or /48 of an address (mailroom.ClientNetwork);
// every invalid address is one network.
func network(a netip.Addr) netip.Prefix { return mailroom.ClientNetwork(a) }
