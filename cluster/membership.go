// Package cluster keeps this node in the node table (docs/api.md "Limits" "Staying
// up"): it beats the node's heartbeat, releases the claims of nodes that
// stopped beating, and tells the rest of the node how many nodes share the
// storage.
package cluster

import (
	"context"
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/mailroom/mailroom"
)

// Membership is this node's place among the nodes sharing storage.
type Membership struct {
	Store mailroom.NodeStore
	Node  *mailroom.Node
	Log   *slog.Logger
	// Interval is how often the node beats; StaleAfter how old another
	// node's last beat may be before it is taken for dead. Zero means
	// mailroom.NodeHeartbeat and mailroom.NodeStaleAfter.
	Interval   time.Duration
	StaleAfter time.Duration
	// OnNodes, when set, is told the number of live nodes after each beat
	// (the rate limiter divides an account's rate among them).
	OnNodes func(live int)
	// OnReleased, when set, is told that a dead node's claims were
	// released, so that delivery can take them at once.
	OnReleased func()

	// lastBeat is the local time of the last successful beat, in Unix
	// nanoseconds.
	lastBeat atomic.Int64
}

func (m *Membership) interval() time.Duration {
	if m.Interval > 0 {
		return m.Interval
	}
	return mailroom.NodeHeartbeat
}

func (m *Membership) staleAfter() time.Duration {
	if m.StaleAfter > 0 {
		return m.StaleAfter
	}
	return mailroom.NodeStaleAfter
}

// Join registers the node with its first beat; the node should not claim
// work before it has joined.
func (m *Membership) Join(ctx context.Context) error {
	return m.beat(ctx)
}

// Healthy reports whether this node's claims are surely still its own: its
// last beat succeeded, recently enough that no other node can have taken
// it for dead. Half the stale time leaves room for clocks that drift and
// beats that are slow to commit; a failed beat makes the node unhealthy at
// once, so that it stops starting SMTP exchanges whose outcomes it may not
// be able to record, well before others release its claims.
func (m *Membership) Healthy() bool {
	last := m.lastBeat.Load()
	return last != 0 && time.Since(time.Unix(0, last)) < m.staleAfter()/2
}

// Run beats and sweeps every Interval until ctx ends.
func (m *Membership) Run(ctx context.Context) {
	tick := time.NewTicker(m.interval())
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		if err := m.beat(ctx); err != nil && ctx.Err() == nil {
			m.lastBeat.Store(0)
			m.Log.Warn("node heartbeat failed", "node", m.Node.ID, "err", err)
			continue
		}
		m.sweep(ctx)
	}
}

// stepBound is how long one beat or one sweep may take. A beat slower than
// half the stale time leaves the node unhealthy anyway, so waiting longer
// gains nothing; bounding a step by the interval instead would make every
// step fail on storage whose commits are merely slow (a loaded disk),
// leaving the node to be taken for dead while its storage still answers.
// The ticker drops the ticks a slow step spans, so steps never pile up.
func (m *Membership) stepBound() time.Duration {
	return m.staleAfter() / 2
}

// beat records this node's heartbeat and passes on the live count. The
// beat is dated when it starts, not when it commits: the row's heartbeat
// is the database's time of the statement, so dating it later would let
// Healthy outlast what the other nodes see.
func (m *Membership) beat(ctx context.Context) error {
	started := time.Now()
	ctx, cancel := context.WithTimeout(ctx, m.stepBound())
	defer cancel()
	live, err := m.Store.Heartbeat(ctx, m.Node)
	if err != nil {
		return err
	}
	m.lastBeat.Store(started.UnixNano())
	if m.OnNodes != nil {
		m.OnNodes(max(1, live))
	}
	return nil
}

// sweep releases the claims of dead nodes.
func (m *Membership) sweep(ctx context.Context) {
	ctx, cancel := context.WithTimeout(ctx, m.stepBound())
	defer cancel()
	n, err := m.Store.ReleaseLostClaims(ctx, m.staleAfter())
	if err != nil {
		if ctx.Err() == nil {
			m.Log.Warn("releasing dead nodes' claims failed", "err", err)
		}
		return
	}
	if n > 0 {
		m.Log.Info("released the claims of a node that stopped beating", "recipients", n)
		if m.OnReleased != nil {
			m.OnReleased()
		}
	}
}

// Leave releases the node's remaining claims and removes its row: the last
// step of an orderly stop, after delivery has drained.
func (m *Membership) Leave(ctx context.Context) error {
	return m.Store.RemoveNode(ctx, m.Node.ID)
}
