package sites

import (
	"time"
	"unicode/utf8"

	"github.com/mailroom/mailroom"
)

// Observe tells what happened on a connection to key.
func (t *Tracker) Observe(key mailroom.SiteKey, e mailroom.SiteEvent) {
	at := e.At
	if at.IsZero() {
		at = t.now()
	}
	t.mu.Lock()
	k := t.key(key, at)
	raised := k.advance(at)
	switch e.Kind {
	case mailroom.SiteConnected:
		k.open++
		k.refusals, k.noConnectUntil = 0, time.Time{}
		k.greetedInEpisode(at)
	case mailroom.SiteDisconnected:
		k.open = max(0, k.open-1)
	case mailroom.SiteDelivered:
		if k.delivered(at) {
			raised = true
		}
	case mailroom.SiteThrottled, mailroom.SiteThrottledOnConnect:
		k.remember(Reply{At: at, Code: e.Code, Enhanced: e.Enhanced, Text: clip(e.Text), MX: e.MX})
		if s, ok := t.throttled(k, at, e.Kind == mailroom.SiteThrottledOnConnect); ok {
			t.pending[key] = s
			t.mu.Unlock()
			t.log.Warn("site suspended after repeated throttling", "site", key.Site, "source", key.Source,
				"until", s.Until, "level", s.Level, "reply", e.Text)
			t.wakeRun()
			return
		}
	}
	t.mu.Unlock()
	if raised {
		t.signal()
	}
}

// throttled applies a throttling reply at at to k: the first of an
// episode may suspend the key, an episode halves the rate once, and a
// throttle on connecting caps the connections. It returns the suspension
// it began. t.mu must be held.
//
// A key with no rate in force has no rate to halve until a throttle within
// a session says it sends too fast: refusals on connecting alone say that
// it has too many connections open, which the cap they set answers. Halving
// the rate it was sent at as well would, after a first contact's burst of
// 421s (when almost nothing has been sent), leave the site at a crawl that
// the receiver never asked for.
func (t *Tracker) throttled(k *keyState, at time.Time, onConnect bool) (mailroom.SiteSuspension, bool) {
	if k.suspended(at) {
		// It answers what was sent before the suspension.
		return mailroom.SiteSuspension{}, false
	}
	if k.episode.start.IsZero() || at.Sub(k.episode.last) > EpisodeWindow || at.Sub(k.episode.start) > MaxEpisode {
		k.episode = episode{start: at, last: at, connBefore: k.connLimit}
		k.rateQuiet = later(k.rateQuiet, at)
		k.winEpisode = true
		k.episodes = append(recent(k.episodes, at), at)
		if len(k.episodes) >= SuspendAfter {
			k.halve(at)
			return t.suspend(k, at), true
		}
	}
	k.episode.last = at
	if !k.episode.halved && (k.rate > 0 || !onConnect) {
		k.episode.halved = true
		k.halve(at)
	}
	if onConnect {
		// A receiver that refuses connections is not dialled again at
		// once: each refusal in a row doubles the wait before the next
		// new connection. The connections open go on carrying mail.
		k.refusals++
		k.noConnectUntil = later(k.noConnectUntil, at.Add(connectBackoff(k.refusals)))
		// RFC 5321 §3.8: a 421 greeting ends the session. The receiver
		// refused this connection with the others open: that is its cap.
		k.episode.connSeen = max(k.episode.connSeen, max(1, k.open))
		k.connLimit = min(k.episode.connBefore, k.episode.connSeen)
		k.connQuiet = at
	}
	return mailroom.SiteSuspension{}, false
}

// greetedInEpisode counts a connection greeted at at, during an episode
// in which the receiver refused others on connecting, as one its cap
// allows. In a burst of new connections the receiver greets some and
// refuses the rest at once, and a refusal is often read before the
// greetings it was sent after: the connections open at that moment
// undercount what the receiver let in, and the cap learned from them
// alone would be lower than the receiver's. t.mu must be held.
func (k *keyState) greetedInEpisode(at time.Time) {
	e := &k.episode
	if e.connSeen == 0 || at.Sub(e.last) > EpisodeWindow || at.Sub(e.start) > MaxEpisode {
		return
	}
	e.connSeen = max(e.connSeen, k.open)
	k.connLimit = min(e.connBefore, e.connSeen)
}

// halve lowers k's rate for a new episode, and sets the step by which
// quiet windows raise it again.
func (k *keyState) halve(at time.Time) {
	var before, r float64
	if k.rate > 0 {
		before = k.rate
		r = max(MinRate, k.rate/2)
	} else {
		// No rate in force: half the rate actually sent at, floored so
		// that a first contact's burst does not leave the site crawling.
		r = max(FirstRateFloor, k.observedRate(at)/2)
		before = 2 * r
	}
	k.step = max(MinStep, before/StepDivisor)
	k.setRate(at, r)
}

// suspend suspends k from at: FirstSuspension, doubled for each suspension
// that starts within SuspensionMemory of the previous one's end. t.mu must
// be held.
func (t *Tracker) suspend(k *keyState, at time.Time) mailroom.SiteSuspension {
	prev := k.suspension
	if s, ok := t.known[k.key]; ok && s.Until.After(prev.Until) {
		prev = s
	}
	level := 1
	if !prev.Until.IsZero() && at.Sub(prev.Until) <= SuspensionMemory {
		level = prev.Level + 1
	}
	s := mailroom.SiteSuspension{Key: k.key, Until: at.Add(suspensionFor(level)), Level: level}
	k.suspension = s
	k.suspendedUntil = s.Until
	k.suspendedTill(s.Until)
	return s
}

// connectBackoff is the wait before a new connection after n refusals on
// connecting in a row: ConnectBackoff, doubled for each after the first,
// at most MaxConnectBackoff.
func connectBackoff(n int) time.Duration {
	d := ConnectBackoff
	for i := 1; i < n && d < MaxConnectBackoff; i++ {
		d *= 2
	}
	return min(d, MaxConnectBackoff)
}

// suspensionFor is the length of a suspension of level (1 is the first).
func suspensionFor(level int) time.Duration {
	d := FirstSuspension
	for i := 1; i < level && d < MaxSuspension; i++ {
		d *= 2
	}
	return min(d, MaxSuspension)
}

// recent is the episode starts within SuspendWindow before at.
func recent(starts []time.Time, at time.Time) []time.Time {
	i := 0
	for i < len(starts) && at.Sub(starts[i]) >= SuspendWindow {
		i++
	}
	return append(starts[:0], starts[i:]...)
}

// remember keeps r among the key's last RecentReplies throttling replies.
func (k *keyState) remember(r Reply) {
	if len(k.replies) == RecentReplies {
		copy(k.replies, k.replies[1:])
		k.replies = k.replies[:RecentReplies-1]
	}
	k.replies = append(k.replies, r)
}

// maxReplyText bounds a remembered reply's text: a receiver may say a lot.
const maxReplyText = 512

func clip(s string) string {
	if len(s) <= maxReplyText {
		return s
	}
	i := maxReplyText
	for i > 0 && !utf8.RuneStart(s[i]) {
		i--
	}
	return s[:i]
}

func (t *Tracker) wakeRun() {
	select {
	case t.wake <- struct{}{}:
	default:
	}
}
