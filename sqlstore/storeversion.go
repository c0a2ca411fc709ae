package sqlstore

import (
	"context"
	"database/sql"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/pressly/goose/v3"

	"github.com/mailroom/mailroom"
)

// ApplyMigrations applies the migrations of p that the store lacks, as
// both engines open their store, and returns the versions it applied. It
// says in one line of the default logger which it applied and how long
// they took (and returns their versions, in order, for `mailroom migrate` to
// report): an operator upgrading sees that the store was rewritten
// (migration 00015 takes minutes on a large store), and a fresh store's
// first start says it was set up. Then it refuses a store migrated past
// the newest migration this binary carries (Up applies nothing to one): a
// newer Mailroom may have rewritten its rows in a form this one would
// misread (00015 stores ids as bytes where older binaries compare text),
// and refusing to start is the only safe answer to a downgrade.
//
// Before it migrates, it refuses while another node of the store is alive
// (a heartbeat in nodes within mailroom.NodeStaleAfter, in the database's
// clock, nowMicros): a node of the old version reads the rewritten rows
// wrong, and kept answering /readyz while every request failed. Nodes
// stopped cleanly have left the table, and one that died is taken for gone
// after NodeStaleAfter, as its claims are.
func ApplyMigrations(ctx context.Context, p *goose.Provider, db *sql.DB, nowMicros string) ([]int64, error) {
	if err := refuseWhileNodesRun(ctx, p, db, nowMicros); err != nil {
		return nil, err
	}
	applied, err := p.Up(ctx)
	if err != nil {
		return nil, fmt.Errorf("apply migrations: %w", err)
	}
	var versions []int64
	if len(applied) > 0 {
		var took time.Duration
		for _, r := range applied {
			versions, took = append(versions, r.Source.Version), took+r.Duration
		}
		slog.Info("storage migrated", "applied", versions, "took", took.Round(time.Millisecond))
	}
	current, newest, err := p.GetVersions(ctx)
	if err != nil {
		return versions, fmt.Errorf("read the storage's version: %w", err)
	}
	if current > newest {
		return versions, fmt.Errorf("the storage was migrated by a newer Mailroom (migration %d; this one knows up to %d): run that version, or restore a backup taken before the upgrade", current, newest)
	}
	return versions, nil
}

// nodesTable is the migration that made the nodes table: a store below it
// has no nodes to ask.
const nodesTable = 4

// refuseWhileNodesRun is ApplyMigrations' check that no node runs on a
// store it is about to migrate.
func refuseWhileNodesRun(ctx context.Context, p *goose.Provider, db *sql.DB, nowMicros string) error {
	pending, err := p.HasPending(ctx)
	if err != nil || !pending {
		return err // (an error here is Up's to report, with the same cause)
	}
	current, err := p.GetDBVersion(ctx)
	if err != nil || current < nodesTable {
		return nil
	}
	rows, err := db.QueryContext(ctx, `SELECT hostname, (`+nowMicros+` - heartbeat_at) / 1000000 FROM nodes
		WHERE heartbeat_at >= `+nowMicros+` - $1 ORDER BY hostname`, mailroom.NodeStaleAfter.Microseconds())
	if err != nil {
		return fmt.Errorf("read the nodes before migrating: %w", err)
	}
	defer rows.Close()
	var running []string
	for rows.Next() {
		var host string
		var ago int64
		if err := rows.Scan(&host, &ago); err != nil {
			return fmt.Errorf("read the nodes before migrating: %w", err)
		}
		running = append(running, fmt.Sprintf("%s (heard %d s ago)", host, ago))
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("read the nodes before migrating: %w", err)
	}
	if len(running) > 0 {
		// A node of this version that started beside this one may have
		// migrated the store, then joined, since HasPending above: the
		// store needs nothing then, and its nodes are no reason to refuse.
		if pending, err := p.HasPending(ctx); err == nil && !pending {
			return nil
		}
		return fmt.Errorf("the storage needs migrations, but %d node(s) of it are running: %s; stop every node first, "+
			"an older one cannot read the migrated rows (a node that stopped without leaving is taken for gone %s after its last heartbeat)",
			len(running), strings.Join(running, ", "), mailroom.NodeStaleAfter)
	}
	return nil
}
