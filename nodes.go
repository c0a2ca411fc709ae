package mailroom

import (
	"context"
	"time"
)

// Node is one running `mailroom serve` (docs/api.md "Limits" "Staying up"). Nodes
// sharing storage know each other through their heartbeats: a node whose
// heartbeat is older than NodeStaleAfter is taken for dead, and its claims
// are released for any node to deliver.
type Node struct {
	ID        string // "node_…"
	Hostname  string
	StartedAt time.Time
}

// Heartbeat timing. A dead node's mail is claimable again at most
// NodeStaleAfter plus one NodeHeartbeat after its last beat, well inside
// the two minutes docs/api.md "Limits" allows.
const (
	NodeHeartbeat  = 5 * time.Second
	NodeStaleAfter = 30 * time.Second
)

// NodeStore keeps the node table and releases the claims of nodes that are
// gone. Heartbeats are written in the database's clock, so that nodes with
// skewed clocks agree on who is alive.
type NodeStore interface {
	// Heartbeat records that n is alive (inserting its row if it is
	// missing, as after it was taken for dead) and returns how many nodes
	// are alive, n included.
	Heartbeat(ctx context.Context, n *Node) (live int, err error)
	// ReleaseLostClaims forgets the nodes whose heartbeat is older than
	// staleAfter and releases every claim whose node is gone, or whose
	// lease has ended (a node that lives but whose worker is stuck); it
	// returns how many recipients it released.
	ReleaseLostClaims(ctx context.Context, staleAfter time.Duration) (int, error)
	// RemoveNode releases n's claims and removes its row: a node that
	// stops in good order leaves nothing to wait for.
	RemoveNode(ctx context.Context, nodeID string) error
	// ReleaseAllClaims releases every claim of every node: for storage
	// that only one node can use at a time (SQLite), at its start.
	ReleaseAllClaims(ctx context.Context) (int, error)
}
