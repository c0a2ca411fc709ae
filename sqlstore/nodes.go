package sqlstore

import (
	"context"
	"database/sql"
	"time"

	"github.com/mailroom/mailroom"
)

// releaseClaims is the SET clause that ends a claim without an outcome:
// the recipient keeps its due time and is claimable again at once.
const releaseClaims = `claim_node = NULL, claim_token = NULL, lease_until = NULL`

// Heartbeat records that n is alive, in the database's clock, and counts the
// live nodes.
func (s *Store) Heartbeat(ctx context.Context, n *mailroom.Node) (int, error) {
	var live int
	err := s.inTx(ctx, func(tx *sql.Tx) error {
		now := s.dialect.SQL.NowMicros
		_, err := tx.ExecContext(ctx, `INSERT INTO nodes (id, hostname, started_at, heartbeat_at) VALUES ($1, $2, $3, `+now+`)
			ON CONFLICT (id) DO UPDATE SET heartbeat_at = excluded.heartbeat_at`, n.ID, n.Hostname, micros(n.StartedAt))
		if err != nil {
			return s.wrap(err, "heartbeat")
		}
		return s.wrap(tx.QueryRowContext(ctx, `SELECT count(*) FROM nodes WHERE heartbeat_at >= `+now+` - $1`,
			mailroom.NodeStaleAfter.Microseconds()).Scan(&live), "count nodes")
	})
	return live, err
}

// ReleaseLostClaims forgets the nodes whose heartbeat is stale, then
// releases every claim whose node is not in the table (theirs, and any left
// by a node whose row went missing some other way) or whose lease has
// ended. One cut-off decides both, so no node can be forgotten with its
// claims kept. Claims are only ever taken from released recipients (see
// ClaimDueRecipients), so this sweep is what returns lost work. A node that was
// only cut off (not dead) finds its row gone at its next beat and registers
// again; its outcomes for the claims released here are fenced off by their
// tokens. A live node always has its row: it joins before it claims, and
// stops claiming once its own beats fail for half the stale time.
func (s *Store) ReleaseLostClaims(ctx context.Context, staleAfter time.Duration) (int, error) {
	var released int64
	err := s.inTx(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `DELETE FROM nodes WHERE heartbeat_at < `+s.dialect.SQL.NowMicros+` - $1`, staleAfter.Microseconds())
		if err != nil {
			return s.wrap(err, "forget dead nodes")
		}
		res, err := tx.ExecContext(ctx, `UPDATE recipients SET `+releaseClaims+`
			WHERE claim_node IS NOT NULL AND (claim_node NOT IN (SELECT id FROM nodes) OR lease_until < `+s.dialect.SQL.NowMicros+`)`)
		if err != nil {
			return s.wrap(err, "release dead nodes' claims")
		}
		released, _ = res.RowsAffected()
		return nil
	})
	return int(released), err
}

// RemoveNode releases a stopping node's claims and removes its row.
func (s *Store) RemoveNode(ctx context.Context, nodeID string) error {
	return s.inTx(ctx, func(tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, `UPDATE recipients SET `+releaseClaims+` WHERE claim_node = $1`, nodeID); err != nil {
			return s.wrap(err, "release claims")
		}
		_, err := tx.ExecContext(ctx, `DELETE FROM nodes WHERE id = $1`, nodeID)
		return s.wrap(err, "remove node")
	})
}

// ReleaseAllClaims releases every claim and forgets every node.
func (s *Store) ReleaseAllClaims(ctx context.Context) (int, error) {
	var released int64
	err := s.inTx(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `UPDATE recipients SET `+releaseClaims+` WHERE claim_node IS NOT NULL`)
		if err != nil {
			return s.wrap(err, "release claims")
		}
		released, _ = res.RowsAffected()
		// Webhook deliveries' leases would run out by themselves within a
		// minute; released, they go at once. Any due time at or before
		// their creation is "due now".
		if _, err := tx.ExecContext(ctx, `UPDATE webhook_deliveries SET claim_token = NULL, claim_node = NULL, due_at = created_at
			WHERE claim_token IS NOT NULL`); err != nil {
			return s.wrap(err, "release webhook claims")
		}
		_, err = tx.ExecContext(ctx, `DELETE FROM nodes`)
		return s.wrap(err, "forget nodes")
	})
	return int(released), err
}
