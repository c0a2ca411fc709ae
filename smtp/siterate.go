package smtp

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/mailroom/mailroom"
)

// maxRateWait is the longest a delivery waits for its place in a site's
// rate, holding its connection slot: a later place hands the delivery back
// to the delivery runtime, due then, rather than keep a worker and a
// connection waiting.
const maxRateWait = 30 * time.Second

// start takes a session or a slot under one source address's cap and a
// place in that key's rate (mailroom.Sites.Reserve), waiting for the place
// when it comes within maxRateWait and the context's deadline. A key that
// is suspended, or whose place comes later, gives way to the pool's other
// addresses; when none is left, every recipient is deferred until the
// suspension ends (site_suspended) or handed back unattempted, due at the
// earliest place. res is set when nothing is to be sent.
func (a *siteAttempt) start(ctx context.Context, sources []mailroom.SourceAddress) (l lease, src mailroom.SourceAddress, place mailroom.SiteReservation, res []mailroom.RecipientResult) {
	w := a.request
	w.keys = slices.Clone(w.keys)
	sources = slices.Clone(sources)
	var next, suspendedUntil time.Time
	for len(w.keys) > 0 {
		l, err := a.eng.conns.acquire(ctx, w)
		if err != nil {
			if a.del.MayNotStart() {
				return lease{}, src, place, a.del.NotAttempted()
			}
			if errors.Is(err, errBusy) {
				// Handed back, due when the site may take it (now, or
				// when a refused site may be dialled again): the runtime
				// claims it again once the site has room.
				now := a.now()
				return lease{}, src, place, a.notAttempted(later(now, a.sites.ReadyAt(a.profile.Name, now)),
					"every connection to site %s is in use", a.profile.Name)
			}
			why := deferred(enhCongestion, "no connection to site %s could be had before the deadline: %v", a.profile.Name, err)
			return lease{}, src, place, results(a.del.Recipients, "", why)
		}
		if a.del.MayNotStart() {
			a.eng.conns.giveBack(l)
			return lease{}, src, place, a.del.NotAttempted()
		}
		now := a.now()
		place := a.sites.Reserve(l.key, now)
		switch {
		case !place.SuspendedUntil.IsZero():
			suspendedUntil = earliest(suspendedUntil, place.SuspendedUntil)
		case mayWait(ctx, now, place.At):
			if waitUntil(ctx, place.At.Sub(now)) && !a.del.MayNotStart() {
				return l, sources[l.index], place, nil
			}
			// The node stops sending: nothing was sent.
			cancelPlace(place)
			a.eng.conns.giveBack(l)
			return lease{}, src, place, a.notAttempted(place.At, "the node stopped sending")
		default:
			cancelPlace(place)
			next = earliest(next, place.At)
		}
		a.eng.conns.giveBack(l)
		w.keys = slices.Delete(w.keys, l.index, l.index+1)
		sources = slices.Delete(sources, l.index, l.index+1)
	}
	if !next.IsZero() {
		return lease{}, src, place, a.notAttempted(next, "the rate of site %s has a place at %s", a.profile.Name, next.UTC().Format(time.RFC3339))
	}
	return lease{}, src, place, a.suspended(suspendedUntil)
}

// mayWait says whether a place at at is near enough to wait for: within
// maxRateWait, and before the context's deadline. The wait is measured on
// the sites' clock (now), the deadline on the real one.
func mayWait(ctx context.Context, now, at time.Time) bool {
	wait := at.Sub(now)
	if wait > maxRateWait {
		return false
	}
	deadline, ok := ctx.Deadline()
	return !ok || wait <= time.Until(deadline)
}

// waitUntil waits d, reporting false when ctx ends first.
func waitUntil(ctx context.Context, d time.Duration) bool {
	if d <= 0 {
		return ctx.Err() == nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}

// cancelPlace gives back a place in a site's rate that no transaction
// used.
func cancelPlace(p mailroom.SiteReservation) {
	if p.Cancel != nil {
		p.Cancel()
	}
}

func later(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}

func earliest(a, b time.Time) time.Time {
	if a.IsZero() || b.Before(a) {
		return b
	}
	return a
}

// notAttempted hands every recipient back unattempted, due at, saying
// why (format and args).
func (a *siteAttempt) notAttempted(at time.Time, format string, args ...any) []mailroom.RecipientResult {
	why := "not attempted: " + fmt.Sprintf(format, args...)
	out := make([]mailroom.RecipientResult, len(a.del.Recipients))
	for i, r := range a.del.Recipients {
		out[i] = mailroom.RecipientResult{Recipient: r, Outcome: mailroom.NotAttempted, RetryAt: at, Response: why}
	}
	return out
}

// suspended defers every recipient until the site's suspension ends;
// nothing was sent.
func (a *siteAttempt) suspended(until time.Time) []mailroom.RecipientResult {
	why := deferred(enhCongestion, "not attempted: site %s is suspended until %s after repeated throttling",
		a.profile.Name, until.UTC().Format(time.RFC3339))
	why.Reason = mailroom.DeferSiteSuspended
	out := results(a.del.Recipients, "", why)
	for i := range out {
		out[i].RetryAt = until
	}
	return out
}
