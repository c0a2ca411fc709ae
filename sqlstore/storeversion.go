package sqlstore

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/pressly/goose/v3"
)

// ApplyMigrations applies the migrations of p that the store lacks, as
// both engines open their store, and returns how many it applied. It
// says in one line of the default logger which it applied and how long
// they took: an operator upgrading sees that the store was rewritten
// (migration 00015 takes minutes on a large store), and a fresh store's
// first start says it was set up. Then it refuses a store migrated past
// the newest migration this binary carries (Up applies nothing to one): a
// newer Mailroom may have rewritten its rows in a form this one would
// misread (00015 stores ids as bytes where older binaries compare text),
// and refusing to start is the only safe answer to a downgrade.
func ApplyMigrations(ctx context.Context, p *goose.Provider) (int, error) {
	applied, err := p.Up(ctx)
	if err != nil {
		return 0, fmt.Errorf("apply migrations: %w", err)
	}
	if len(applied) > 0 {
		var versions []int64
		var took time.Duration
		for _, r := range applied {
			versions, took = append(versions, r.Source.Version), took+r.Duration
		}
		slog.Info("storage migrated", "applied", versions, "took", took.Round(time.Millisecond))
	}
	current, newest, err := p.GetVersions(ctx)
	if err != nil {
		return len(applied), fmt.Errorf("read the storage's version: %w", err)
	}
	if current > newest {
		return len(applied), fmt.Errorf("the storage was migrated by a newer Mailroom (migration %d; this one knows up to %d): run that version, or restore a backup taken before the upgrade", current, newest)
	}
	return len(applied), nil
}
