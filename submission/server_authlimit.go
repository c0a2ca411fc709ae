package submission

import (
	"math"
	"sync"
	"time"

	"golang.org/x/time/rate"
)

// authSweepInterval is how often the limiter forgets the addresses whose
// budget is whole again.
const authSweepInterval = time.Minute

// authLimiter counts failed logins per client address (IPv4 address, IPv6
// /64) in a token bucket of burst failures, refilled one per interval, and
// says how long the next login from an address waits before it is checked.
//
// A login never costs a token; only a failure takes one, so successful
// logins are never slowed while the address stays within its budget. Once
// the budget is spent, each further AUTH from the address is answered
// after a delay that doubles with each failure beyond the budget, from
// firstDelay to at most maxDelay, and its credentials are STILL checked
// (docs/api.md "SMTP submission"): a key secret is 256 bits and cannot be
// guessed at any rate, and refusing a right key behind a NAT would let one
// misconfigured worker lock out every process sharing its address. The
// delay only makes a guessing client, and its logs, slow and visible.
//
// The debt below zero is capped at burst failures, so that an address
// whose failures stop is answered without delay again within burst+1
// intervals (a minute by default), and whole within 2·burst, however long
// it failed before.
type authLimiter struct {
	burst      int
	every      time.Duration
	firstDelay time.Duration
	maxDelay   time.Duration
	now        func() time.Time

	mu        sync.Mutex
	addrs     map[string]*rate.Limiter
	lastSweep time.Time
}

func newAuthLimiter(burst int, every, firstDelay, maxDelay time.Duration, now func() time.Time) *authLimiter {
	return &authLimiter{burst: burst, every: every, firstDelay: firstDelay, maxDelay: maxDelay,
		now: now, addrs: map[string]*rate.Limiter{}}
}

// delay is how long a login from client waits before its credentials are
// checked: 0 within the budget; beyond it firstDelay, doubling with each
// failure over the budget still remembered, up to maxDelay.
func (l *authLimiter) delay(client string) time.Duration {
	l.mu.Lock()
	lim := l.addrs[client]
	l.mu.Unlock()
	if lim == nil {
		return 0
	}
	tokens := lim.TokensAt(l.now())
	if tokens >= 1 {
		return 0
	}
	// over is 1 once the budget is spent, 2 after one more failure, …
	over := int(math.Ceil(1 - tokens))
	d := l.firstDelay
	for i := 1; i < over && d < l.maxDelay; i++ {
		d *= 2
	}
	return min(d, l.maxDelay)
}

// failed charges client for a failed login.
func (l *authLimiter) failed(client string) {
	now := l.now()
	l.mu.Lock()
	defer l.mu.Unlock()
	lim := l.addrs[client]
	if lim == nil {
		lim = rate.NewLimiter(rate.Every(l.every), l.burst)
		l.addrs[client] = lim
	}
	// ReserveN always succeeds for one token and may leave a debt, which
	// is the point: the reservation itself is not waited on. Beyond the
	// cap the delay is maxDelay already, and a deeper debt would only
	// keep the address slowed longer after its failures stop.
	if lim.TokensAt(now) >= 1-float64(l.burst) {
		lim.ReserveN(now, 1)
	}
	l.sweep(now)
}

// sweep forgets the addresses whose budget is whole again; l.mu is held.
func (l *authLimiter) sweep(now time.Time) {
	if now.Sub(l.lastSweep) < authSweepInterval {
		return
	}
	l.lastSweep = now
	for client, lim := range l.addrs {
		if lim.TokensAt(now) >= float64(l.burst) {
			delete(l.addrs, client)
		}
	}
}

// size is how many addresses are remembered, for tests.
func (l *authLimiter) size() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.addrs)
}
