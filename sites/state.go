package sites

import (
	"math"
	"time"

	"golang.org/x/time/rate"

	"github.com/mailroom/mailroom"
)

// keyState is what one site key has learned. Tracker.mu guards it; its
// limiter has a lock of its own, so that Cancel needs no other.
type keyState struct {
	key      mailroom.SiteKey
	created  time.Time
	lastUsed time.Time

	// connShare and rateShare are this node's share of the profile's
	// limits, as last computed (rateShare 0: no limit).
	connShare int
	rateShare float64

	connLimit int
	open      int
	// refusals counts the refusals on connecting since a connection was
	// last greeted, and noConnectUntil is when a new connection may be
	// made again after the last of them (ConnectBackoff).
	refusals       int
	noConnectUntil time.Time
	// connQuiet is the last throttle on connecting, or the last rise of
	// connLimit: ConnectionQuiet after it, a delivery raises the limit.
	connQuiet time.Time

	// rate is the messages a minute in force, 0 for none; limiter
	// enforces it (rate.Inf when none).
	rate    float64
	limiter *rate.Limiter
	// step is the additive increase per quiet window.
	step   float64
	starts startCounter

	// The additive increase's current window.
	winStart     time.Time
	winDelivered bool
	winEpisode   bool

	episode  episode
	episodes []time.Time // starts of the episodes within SuspendWindow
	// rateQuiet is the last episode, or the end of the last suspension
	// when later: QuietLift after it, an unlimited profile's learned rate
	// is lifted.
	rateQuiet time.Time

	suspendedUntil time.Time
	// suspension is the key's latest, ended or not, whose level the next
	// one doubles.
	suspension mailroom.SiteSuspension

	replies []Reply
}

// episode is the current throttling episode.
type episode struct {
	// start is its first reply, last its latest.
	start, last time.Time
	// connBefore is the connection limit when it began; connSeen the
	// highest count of open connections a throttle on connecting saw in
	// it (0: none yet).
	connBefore int
	connSeen   int
	// halved says the episode has halved the rate (once at most).
	halved bool
}

func newKeyState(key mailroom.SiteKey, now time.Time, connShare int, rateShare float64) *keyState {
	k := &keyState{
		key: key, created: now, lastUsed: now,
		connShare: connShare, rateShare: rateShare, connLimit: connShare,
		connQuiet: now, winStart: now,
		limiter: rate.NewLimiter(rate.Inf, 1),
		step:    max(MinStep, rateShare/StepDivisor),
	}
	if rateShare > 0 {
		// A new key starts with a full burst.
		k.rate = rateShare
		k.limiter = rate.NewLimiter(rate.Limit(rateShare/60), burstOf(rateShare))
	}
	return k
}

// setRate puts perMinute in force (0: no limit). Places already reserved
// keep their times; the next one is spaced at the new rate after them.
func (k *keyState) setRate(now time.Time, perMinute float64) {
	k.rate = perMinute
	if perMinute <= 0 {
		k.limiter.SetLimitAt(now, rate.Inf)
		return
	}
	k.limiter.SetBurstAt(now, burstOf(perMinute))
	k.limiter.SetLimitAt(now, rate.Limit(perMinute/60))
}

// burstOf is about one second's worth of perMinute, at least one message.
func burstOf(perMinute float64) int {
	return max(1, int(math.Floor(perMinute/60)))
}

// reshare moves the key to new shares of its profile's limits, keeping what
// it learned below the old ones: a limit at its old share follows the share,
// a lowered one stays (within the new share).
func (k *keyState) reshare(now time.Time, connShare int, rateShare float64) {
	if k.connLimit >= k.connShare {
		k.connLimit = connShare
	} else {
		k.connLimit = min(k.connLimit, connShare)
	}
	newRate := k.rate
	switch {
	case k.rateShare > 0 && k.rate >= k.rateShare:
		// At the old share: follow the share (which may be no limit).
		newRate = rateShare
	case k.rate == 0:
		// Nothing learned: the profile's.
		newRate = rateShare
	case rateShare > 0:
		// Learned: kept, within the new share.
		newRate = min(k.rate, rateShare)
	}
	k.connShare, k.rateShare = connShare, rateShare
	if newRate != k.rate {
		k.setRate(now, newRate)
	}
	if k.rate == k.rateShare {
		k.step = max(MinStep, rateShare/StepDivisor)
	}
}

// suspended reports whether the key is suspended at now.
func (k *keyState) suspended(now time.Time) bool {
	return now.Before(k.suspendedUntil)
}

// nextPlace is when the key's rate has room for one transaction, without
// taking it: now, or later when its bucket is empty.
func (k *keyState) nextPlace(now time.Time) time.Time {
	if k.rate <= 0 {
		return now
	}
	tokens := k.limiter.TokensAt(now)
	if tokens >= 1 {
		return now
	}
	perSecond := k.rate / 60
	return now.Add(time.Duration((1 - tokens) / perSecond * float64(time.Second)))
}

// advance closes the additive increase's windows that ended by now: a
// window with deliveries and no episode raises the rate by a step. It
// reports whether a limit was raised. Windows with no event had no
// delivery, and raise nothing.
func (k *keyState) advance(now time.Time) (raised bool) {
	if k.rate > 0 && k.rateShare == 0 && now.Sub(k.rateQuiet) >= QuietLift {
		// An unlimited profile's learned rate, quiet long enough: lifted.
		k.setRate(now, 0)
		raised = true
	}
	if now.Sub(k.winStart) < IncreaseWindow {
		return raised
	}
	if k.winDelivered && !k.winEpisode && k.raiseRate(now) {
		raised = true
	}
	k.winStart = k.winStart.Add(now.Sub(k.winStart).Truncate(IncreaseWindow))
	k.winDelivered, k.winEpisode = false, false
	return raised
}

// raiseRate adds a step to a rate in force, up to the share (an unlimited
// profile's learned rate has no ceiling: it grows by its step or a
// twentieth of itself, whichever is more).
func (k *keyState) raiseRate(at time.Time) bool {
	if k.rate <= 0 {
		return false
	}
	var r float64
	if k.rateShare > 0 {
		if k.rate >= k.rateShare {
			return false
		}
		r = min(k.rateShare, k.rate+k.step)
	} else {
		r = k.rate + max(k.step, k.rate/StepDivisor)
	}
	k.setRate(at, r)
	return true
}

// delivered counts a delivery: the window has one, and after a long quiet
// the connection limit rises by one. It reports whether a limit was raised.
func (k *keyState) delivered(at time.Time) bool {
	k.winDelivered = true
	if k.connLimit < k.connShare && at.Sub(k.connQuiet) >= ConnectionQuiet {
		k.connLimit++
		k.connQuiet = at
		return true
	}
	return false
}

// observedRate is the rate the key was sending at, in messages a minute:
// the transactions started in the last ObservedSpan, spread over that span
// or, for a younger key, over its age but at least ObservedMinSpan.
func (k *keyState) observedRate(now time.Time) float64 {
	span := min(ObservedSpan, max(ObservedMinSpan, now.Sub(k.created)))
	return float64(k.starts.count(now, span)) * float64(time.Minute) / float64(span)
}

// adopt takes a suspension the store knows of (another node's, or this
// node's own read back) when it is the key's latest.
func (k *keyState) adopt(s mailroom.SiteSuspension, now time.Time) {
	if s.Until.After(k.suspension.Until) || s.Level > k.suspension.Level {
		k.suspension = s
	}
	if s.Until.After(now) && !s.Until.Equal(k.suspendedUntil) {
		k.suspendedUntil = s.Until
		k.suspendedTill(s.Until)
	}
}

// suspendedTill starts the key's quiet periods over at the end of its
// suspension: time suspended is not time the receiver accepted mail.
func (k *keyState) suspendedTill(until time.Time) {
	k.episodes = nil
	k.rateQuiet = later(k.rateQuiet, until)
	k.connQuiet = later(k.connQuiet, until)
}

// startCounter counts transaction starts per second over the last minute.
type startCounter struct {
	second [60]int64
	n      [60]int32
}

func (c *startCounter) add(at time.Time) {
	s := at.Unix()
	i := s % 60
	if c.second[i] != s {
		c.second[i], c.n[i] = s, 0
	}
	c.n[i]++
}

// count is the starts in the seconds of (now-span, now].
func (c *startCounter) count(now time.Time, span time.Duration) int {
	s := now.Unix()
	from := s - int64(math.Ceil(span.Seconds()))
	total := 0
	for i := range c.second {
		if c.second[i] > from && c.second[i] <= s {
			total += int(c.n[i])
		}
	}
	return total
}
