package submission

import (
	"sync"
	"time"

	"golang.org/x/time/rate"
)

// authSweepInterval is how often the limiter forgets the addresses whose
// budget is whole again.
const authSweepInterval = time.Minute

// authLimiter limits failed logins per client address (IPv4 address, IPv6
// /64), so that the port is no oracle for guessing keys: a token bucket of
// burst failures, refilled one per interval.
//
// An AUTH is let in when its address has a whole token left, without
// taking it; only a failure takes one, so successful logins are never
// limited, however many connections log in at once. Failures in flight
// together may drive the bucket below zero: the debt is paid in time
// before the next attempt is let in, so over time an address gets no more
// than one guess per interval whatever its concurrency. An attempt let in
// never has its credentials looked at beyond that: an address over its
// budget is answered 421 without a check, so that a right key cannot be
// told from a wrong one then.
type authLimiter struct {
	burst int
	every time.Duration
	now   func() time.Time

	mu        sync.Mutex
	addrs     map[string]*rate.Limiter
	lastSweep time.Time
}

func newAuthLimiter(burst int, every time.Duration, now func() time.Time) *authLimiter {
	return &authLimiter{burst: burst, every: every, now: now, addrs: map[string]*rate.Limiter{}}
}

// allowed says whether client may try to log in now.
func (l *authLimiter) allowed(client string) bool {
	l.mu.Lock()
	lim := l.addrs[client]
	l.mu.Unlock()
	return lim == nil || lim.TokensAt(l.now()) >= 1
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
	// is the point: the reservation itself is not waited on.
	lim.ReserveN(now, 1)
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
