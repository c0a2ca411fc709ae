// Package sites keeps the state of each destination site (docs/api.md "How
// mail leaves"): how many connections and transactions a minute this node
// may give it now, as the receiver's replies have adapted the profile's
// limits, and whether it is suspended. The transport asks it before each
// connection and transaction and tells it what the receiver answered; the
// delivery runtime asks it which sites are full. Tracker implements
// mailroom.Sites.
//
// # Keys and shares
//
// A site's limits hold per source address (mailroom.SiteKey): a receiver
// judges each sending address on its own. Each node keeps its share of the
// profile's limits, as the account rate limits do: max(1,
// floor(max_connections/nodes)) connections and max_rate/nodes messages a
// minute (0 is no limit).
//
// # Rate
//
// A key's rate is enforced with a token bucket (golang.org/x/time/rate)
// whose burst is about one second's worth, at least one message, so that a
// key that was idle does not send a minute's worth at once. Reserve takes a
// place in it; a caller that will not wait gives it back with Cancel.
//
// # Episodes
//
// A throttling reply (mailroom.IsThrottle) starts an episode, and every
// throttling reply within EpisodeWindow of the one before belongs to it, up
// to MaxEpisode from its start, so that the parallel connections and
// transactions a receiver refuses at once count as one complaint, and so do
// the refusals of a receiver that counts over a window of its own (200
// messages in any 10 s) while its window drains: the transactions already
// under way when the rate was halved are refused too, through no fault of
// the halved rate. A receiver that keeps refusing past MaxEpisode makes a
// new episode of it. An episode:
//
//   - halves the key's rate once, never below MinRate. A key with no rate in
//     force (an unlimited profile, or one whose learned rate was lifted) has
//     no rate to halve, and an episode of refusals on connecting alone
//     leaves it so: they say the key has too many connections open, which
//     the cap they set answers. At its first throttle within a session it
//     halves the rate it was actually sending at
//     (transactions started in the last minute, extrapolated over at least
//     the last ObservedMinSpan when the key is younger than that), never
//     below FirstRateFloor, so that a rate complaint soon after first
//     contact, when little has been sent, does not leave the site at a
//     crawl. Three episodes within a minute halve it even so, as they
//     suspend the key.
//   - with a throttle on connecting (a 421 greeting or EHLO), lowers the
//     key's connection limit to the connections open at that moment (at
//     least 1): the receiver has said its cap. Parallel refusals see
//     different counts, so the highest count within the episode is kept,
//     never above the limit before the episode; connections greeted during
//     the episode count too, since a refusal is often read before the
//     greetings the receiver sent first.
//
// Replies that arrive while the key is suspended are recorded (for `mailroom
// sites`) but start no episode: they answer what was sent before.
//
// # Suspension
//
// SuspendAfter episodes within SuspendWindow suspend the key: nothing is
// sent from it until the suspension ends (Reserve returns SuspendedUntil). A
// suspension lasts FirstSuspension, doubled for each suspension that starts
// within SuspensionMemory of the previous one's end, at most MaxSuspension.
// Suspensions are written to the store (mailroom.SiteSuspensionStore) and
// Run reads them back every SyncInterval, so that every node honours one
// within two intervals and knows its level. A burst of parallel 421s on
// first contact is one episode and cannot suspend.
//
// # Recovery (additive increase)
//
// Each IncreaseWindow in which deliveries arrived and no episode began
// raises the key's rate by its step: a twentieth of the rate before the last
// episode, at least MinStep. A limited profile's key rises up to its share
// and stops there. An unlimited profile has no share to return to, so its
// learned rate keeps rising, by its step or a twentieth of the rate now,
// whichever is more (it finds the receiver's limit again in minutes, not
// hours), and QuietLift without an episode lifts it altogether: the key is
// unlimited again, as its profile says.
//
// The connection limit rises by one on a delivery after ConnectionQuiet
// without a throttle on connecting (or since the last rise), up to the
// share: once a receiver has said its cap, the sender does not keep probing
// above it. Time suspended is not quiet: both quiet periods start again at
// a suspension's end.
//
// # Reloads and node counts
//
// SetPolicy (SIGHUP) and a change in the live-node count give every key its
// profile's new shares. A limit at its old share moves to the new one; a
// limit the receiver lowered stays lowered, within the new share.
//
// # What the transport tells
//
// Open connections are those SiteConnected told of and SiteDisconnected has
// not: a connection refused on connecting must not be among them when its
// SiteThrottledOnConnect is told (a 421 to EHLO after a greeting that was
// told as SiteConnected: tell SiteDisconnected first), or the cap learned is
// one too high. Reserve counts a transaction as started (for the observed
// rate) whether or not its place is given back.
//
// # Forgetting
//
// A key not used for IdleForget, with no connection open and no suspension
// in the last SuspensionMemory, is forgotten with what it learned, and drops
// out of Snapshot and the metrics; so is a recipient domain's site.
//
// # The policy file
//
// ParsePolicy reads the --delivery-policy TOML: a [default] table and
// [[site]] tables (see ParsePolicy). A bad file is refused whole, naming
// each problem's line.
package sites

import "time"

// The algorithm's constants (docs/api.md "How mail leaves").
const (
	// MaxEpisode bounds an episode: a receiver that keeps refusing past it
	// (every reply within EpisodeWindow of the one before) makes a new
	// episode of it, which halves the rate again and counts toward a
	// suspension.
	MaxEpisode = 10 * time.Second
	// ConnectBackoff is the wait before a new connection to a key after a
	// refusal on connecting, doubled for each refusal in a row, up to
	// MaxConnectBackoff; a greeted connection ends it.
	ConnectBackoff    = time.Second
	MaxConnectBackoff = time.Minute
	// EpisodeWindow: throttling replies within this of an episode's latest
	// belong to it.
	EpisodeWindow = time.Second
	// SuspendAfter episodes within SuspendWindow suspend a key.
	SuspendAfter  = 3
	SuspendWindow = time.Minute
	// FirstSuspension doubles for each suspension that starts within
	// SuspensionMemory of the previous one's end, up to MaxSuspension.
	FirstSuspension  = 5 * time.Minute
	MaxSuspension    = time.Hour
	SuspensionMemory = time.Hour

	// MinRate is the lowest rate halving leaves, in messages a minute.
	MinRate = 1.0
	// FirstRateFloor is the lowest rate halving an observed rate leaves
	// (a key with no rate in force), in messages a minute: one a second.
	FirstRateFloor = 60.0
	// ObservedSpan is how far back the observed rate looks; a younger key's
	// starts are spread over at least ObservedMinSpan.
	ObservedSpan    = time.Minute
	ObservedMinSpan = 10 * time.Second

	// IncreaseWindow: each such window with deliveries and no episode
	// raises the rate by a step: the rate before the episode divided by
	// StepDivisor, at least MinStep messages a minute.
	IncreaseWindow = 10 * time.Second
	StepDivisor    = 20.0
	MinStep        = 1.0
	// QuietLift without an episode lifts an unlimited profile's learned
	// rate.
	QuietLift = 10 * time.Minute
	// ConnectionQuiet without a throttle on connecting raises the
	// connection limit by one.
	ConnectionQuiet = 10 * time.Minute

	// RecentReplies is how many throttling replies a key remembers.
	RecentReplies = 10
	// IdleForget: a key or domain not used for this long is forgotten.
	IdleForget = time.Hour
	// SyncInterval is how often Run writes and reads suspensions.
	SyncInterval = 5 * time.Second
)
