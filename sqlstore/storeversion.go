package sqlstore

import (
	"context"
	"fmt"
	"log/slog"
	"time"
)

// versions is what CheckStoreVersion needs of a migration provider
// (goose's): the store's version and the newest this binary carries.
type versions interface {
	GetVersions(ctx context.Context) (current, target int64, err error)
}

// CheckStoreVersion refuses a store migrated past the newest migration
// this binary carries. A newer Mailroom may have rewritten its rows in a
// form this one would misread (migration 00015 stores ids as bytes where
// older binaries compare text): refusing to start is the only safe answer
// to a downgrade. Opening an engine calls it after applying its
// migrations, which change nothing in such a store.
func CheckStoreVersion(ctx context.Context, p versions) error {
	current, newest, err := p.GetVersions(ctx)
	if err != nil {
		return fmt.Errorf("read the storage's version: %w", err)
	}
	if current > newest {
		return fmt.Errorf("the storage was migrated by a newer Mailroom (migration %d; this one knows up to %d): run that version, or restore a backup taken before the upgrade", current, newest)
	}
	return nil
}

// LogMigrations says, in one line of the default logger, which migrations
// opening the store applied and how long they took: an operator upgrading
// sees that the store was rewritten (migration 00015 takes minutes on a
// large store), and a fresh store's first start says it was set up.
func LogMigrations(versions []int64, took time.Duration) {
	if len(versions) == 0 {
		return
	}
	slog.Info("storage migrated", "applied", versions, "took", took.Round(time.Millisecond))
}
