package ratelimit

import (
	"context"
	"log/slog"
	"math"
	"sync"
	"time"

	"golang.org/x/time/rate"

	"github.com/mailroom/mailroom"
)

// Limiter holds a token bucket per account that made a request lately.
// Its methods are safe for concurrent use.
type Limiter struct {
	store mailroom.AccountStore
	log   *slog.Logger

	mu sync.Mutex
	// limits holds the accounts whose operator set a limit, by account
	// id, as of the last reload; every other account has the defaults.
	limits  map[string]mailroom.RateLimit
	buckets map[string]*bucket
	nodes   int
}

// bucket is one account's token bucket and the share of the account's
// limit it was last set to; a reload or SetNodes changes the share, and
// the bucket follows on the account's next request (with that request's
// clock, the one the bucket runs on).
type bucket struct {
	tb    *rate.Limiter
	share share
}

// share is one node's part of an account's limit.
type share struct {
	rate  float64
	burst int
}

// New returns a limiter that reads the accounts' limits from store. Until
// the first Reload every account has the defaults.
func New(store mailroom.AccountStore, log *slog.Logger) *Limiter {
	if log == nil {
		log = slog.Default()
	}
	return &Limiter{store: store, log: log, limits: map[string]mailroom.RateLimit{}, buckets: map[string]*bucket{}, nodes: 1}
}

// SetNodes tells the limiter how many live nodes share storage, this one
// included. Each node then enforces rate/n and burst/n of every account
// (a burst never below one request), so that the account's limit holds
// for the account as a whole, not per node, with no coordination per
// request. The node registry calls it from its heartbeat; n below 1 counts
// as 1 (this node is alive).
func (l *Limiter) SetNodes(n int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.nodes = max(1, n)
}

// limitOf is the limit in force for accountID. l.mu must be held.
func (l *Limiter) limitOf(accountID string) mailroom.RateLimit {
	return l.limits[accountID].Effective()
}

// shareOf is this node's part of lim. Burst is rounded to the nearest
// request, which keeps the account's total burst within half a request
// per node of what the operator set.
func (l *Limiter) shareOf(lim mailroom.RateLimit) share {
	return share{
		rate:  lim.Rate / float64(l.nodes),
		burst: max(1, int(math.Round(float64(lim.Burst)/float64(l.nodes)))),
	}
}

// Reload reads every account's limit from storage. Buckets take a changed
// limit on their account's next request. On an error the limits of the
// last reload stay in force.
func (l *Limiter) Reload(ctx context.Context) error {
	accts, err := l.store.ListAccounts(ctx)
	if err != nil {
		return err
	}
	limits := make(map[string]mailroom.RateLimit)
	for _, a := range accts {
		if a.RateLimit != (mailroom.RateLimit{}) {
			limits[a.ID] = a.RateLimit
		}
	}
	l.mu.Lock()
	old := l.limits
	l.limits = limits
	l.mu.Unlock()
	for _, a := range accts {
		if was, now := old[a.ID].Effective(), a.Limits(); was != now {
			l.log.Info("account rate limit changed", "account", a.ID, "name", a.Name, "rate", now.Rate, "burst", now.Burst)
		}
	}
	return nil
}

// Forget drops the buckets that are full at now. A full bucket is exactly
// what a new one would be, so nothing is lost, and memory stays bounded by
// the accounts active within the last burst/rate seconds.
func (l *Limiter) Forget(now time.Time) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for id, b := range l.buckets {
		if b.tb.TokensAt(now) >= float64(b.share.burst) {
			delete(l.buckets, id)
		}
	}
}

// Run reloads the limits and forgets full buckets every interval (5 s in
// serve, so that `mailroom accounts update` applies on running nodes
// within the 10 s that docs/api.md "Limits" promises) until ctx ends. A failed
// reload is logged and retried on the next tick.
func (l *Limiter) Run(ctx context.Context, every time.Duration) {
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		if err := l.Reload(ctx); err != nil && ctx.Err() == nil {
			l.log.Warn("reloading account rate limits failed; the previous limits stay in force", "err", err)
		}
		l.Forget(time.Now())
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// Buckets is the number of accounts whose buckets are held in memory.
func (l *Limiter) Buckets() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.buckets)
}

// Nodes is the node count of the last SetNodes (1 until then).
func (l *Limiter) Nodes() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.nodes
}
