package sites

import (
	"time"

	"github.com/mailroom/mailroom"
)

// MaxConnections is how many connections key may have open now: its
// limit, or, while it waits after refusals on connecting, no more than
// are open (0 when none is).
func (t *Tracker) MaxConnections(key mailroom.SiteKey) int {
	now := t.now()
	t.mu.Lock()
	defer t.mu.Unlock()
	k := t.key(key, now)
	if now.Before(k.noConnectUntil) {
		return min(k.connLimit, k.open)
	}
	return k.connLimit
}

// Reserve takes one transaction's place in key's rate. A suspended key
// reserves nothing.
func (t *Tracker) Reserve(key mailroom.SiteKey, now time.Time) mailroom.SiteReservation {
	t.mu.Lock()
	k := t.key(key, now)
	raised := k.advance(now)
	if k.suspended(now) {
		until := k.suspendedUntil
		t.mu.Unlock()
		return mailroom.SiteReservation{SuspendedUntil: until, Cancel: func() {}}
	}
	if k.ended(now) {
		raised = true
	}
	k.starts.add(now)
	res := mailroom.SiteReservation{At: now, Cancel: func() {}}
	if k.rate > 0 {
		r := k.limiter.ReserveN(now, 1)
		res.At = now.Add(r.DelayFrom(now))
		// The limiter has a lock of its own: giving a place back takes
		// no other.
		res.Cancel = func() { r.CancelAt(t.now()) }
	}
	t.mu.Unlock()
	if raised {
		t.signal()
	}
	return res
}

// ended clears a suspension that has ended by now, and reports whether
// there was one.
func (k *keyState) ended(now time.Time) bool {
	if k.suspendedUntil.IsZero() || k.suspended(now) {
		return false
	}
	k.suspendedUntil = time.Time{}
	return true
}

// Capacity is how many transactions this node should have in flight to
// site: the sum of its keys' connection limits, or the profile's share for
// a site not yet contacted.
func (t *Tracker) Capacity(site string) int {
	t.mu.Lock()
	defer t.mu.Unlock()
	bySource := t.keys[site]
	if len(bySource) == 0 {
		return t.connShare(t.profileOf(site))
	}
	n := 0
	for _, k := range bySource {
		n += k.connLimit
	}
	return n
}

// ReadyAt is the earliest time a transaction to site may start from any of
// its keys, the zero time when one may start now: for each key, its
// suspension's end, or the next place in its rate. It takes no place.
func (t *Tracker) ReadyAt(site string, now time.Time) time.Time {
	raised := false
	t.mu.Lock()
	defer func() {
		t.mu.Unlock()
		if raised {
			t.signal()
		}
	}()
	var earliest time.Time
	for _, k := range t.keys[site] {
		if k.advance(now) {
			raised = true
		}
		at := k.nextPlace(now)
		if k.open == 0 && k.noConnectUntil.After(at) {
			// No connection to carry it, and none may be made yet.
			at = k.noConnectUntil
		}
		if k.suspended(now) {
			at = k.suspendedUntil
		}
		if !at.After(now) {
			return time.Time{}
		}
		if earliest.IsZero() || at.Before(earliest) {
			earliest = at
		}
	}
	return earliest
}
