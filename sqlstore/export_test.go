package sqlstore

import (
	"context"
	"database/sql"
)

// Commit runs fn through the group committer, for tests of the committer
// itself.
func (s *Store) Commit(ctx context.Context, fn func(ctx context.Context, tx *sql.Tx) error, locks ...string) error {
	return s.committer.do(ctx, fn, locks...)
}

// SplitGroups is how many groups the committer ran again job by job.
func (s *Store) SplitGroups() int64 { return s.committer.split.Load() }

// CommitQueue is how many jobs wait for the committer.
func (s *Store) CommitQueue() int { return len(s.committer.queue) }

// Committers is how many transactions the committer runs at once.
func (s *Store) Committers() int { return max(1, s.dialect.Writes.Committers) }
