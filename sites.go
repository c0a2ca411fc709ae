package mailroom

import (
	"context"
	"time"
)

// SiteKey names where one site's limits are kept: the site, and the local
// source address connections to it come from ("" when the system picks the
// address). A site's limits hold per source address (docs/api.md "How mail
// leaves"): the receiver judges each address on its own.
type SiteKey struct {
	Site   string
	Source string
}

// Sites keeps each destination site's limits as its replies have adapted
// them (package sites): the transport asks it before each connection and
// transaction and tells it what the receiver answered; the delivery runtime
// asks it which sites are full, so that their mail is not claimed until
// they have room. Limits are this node's share of the site's. Safe for
// concurrent use.
type Sites interface {
	// Site returns the profile of recipient domain, whose MX hosts are mx,
	// and remembers the domain's site for SiteOf.
	Site(domain string, mx []string) SiteProfile
	// SiteOf is the site Site last found for domain.
	SiteOf(domain string) (site string, ok bool)

	// MaxConnections is how many connections key may have open now: the
	// profile's, lowered by the receiver's 421s on connecting and raised
	// again by deliveries, this node's share, at least 1.
	MaxConnections(key SiteKey) int
	// Reserve takes one transaction's place in key's rate. The
	// transaction may start at the reservation's At; a caller that will
	// not wait that long gives the place back with Cancel. A suspended key
	// reserves nothing: SuspendedUntil is set.
	Reserve(key SiteKey, now time.Time) SiteReservation
	// Observe tells what happened on a connection to key.
	Observe(key SiteKey, e SiteEvent)

	// Capacity is how many transactions this node should have in flight
	// to site: the sum of its keys' connection limits (the profile's for a
	// site not yet contacted).
	Capacity(site string) int
	// ReadyAt is the earliest time a transaction to site may start from
	// any of its keys, the zero time when it may start now: a suspension's
	// end, or the next place in its rate.
	ReadyAt(site string, now time.Time) time.Time
	// Changed is signalled (without blocking, capacity 1) when a site
	// gets room again: the delivery runtime then claims the mail it
	// skipped.
	Changed() <-chan struct{}
}

// SiteReservation is one transaction's place in a site's rate.
type SiteReservation struct {
	At time.Time
	// SuspendedUntil is set when the key is suspended: nothing may be sent
	// to it before then, and nothing was reserved.
	SuspendedUntil time.Time
	// Cancel gives the place back, when the transaction will not happen.
	Cancel func()
}

// SiteEventKind is what a SiteEvent tells.
type SiteEventKind int

const (
	// SiteConnected: a connection to the site was opened and greeted.
	SiteConnected SiteEventKind = iota
	// SiteDisconnected: a connection that SiteConnected told of was closed.
	SiteDisconnected
	// SiteDelivered: a transaction's data was accepted.
	SiteDelivered
	// SiteThrottled: the receiver answered a throttling reply (IsThrottle)
	// within a session.
	SiteThrottled
	// SiteThrottledOnConnect: the receiver answered a throttling reply
	// (a 421 greeting, or to EHLO) on a new connection: it caps the
	// sender's connections at those already open.
	SiteThrottledOnConnect
)

// SiteEvent is one thing a site did, with the reply when there was one.
type SiteEvent struct {
	Kind     SiteEventKind
	At       time.Time
	Code     int
	Enhanced string
	Text     string
	// MX is the host that answered.
	MX string
}

// SiteSuspension is a site key suspended after repeated throttling, kept in
// the store so that every node honours it (docs/api.md "How mail leaves").
type SiteSuspension struct {
	Key   SiteKey
	Until time.Time
	// Level counts the suspensions in a row: each lasts twice the one
	// before, from 5 minutes up to an hour.
	Level int
}

// SiteSuspensionStore keeps site suspensions for all nodes.
type SiteSuspensionStore interface {
	// SuspendSite records s, replacing an earlier suspension of its key,
	// unless that one ends later: two nodes suspending one key at once
	// leave the longer suspension, whichever writes last.
	SuspendSite(ctx context.Context, s SiteSuspension) error
	// SiteSuspensions lists the suspensions that end after since: those in
	// force, and with since an hour back, the recent ones whose Level the
	// next suspension doubles.
	SiteSuspensions(ctx context.Context, since time.Time) ([]SiteSuspension, error)
}
