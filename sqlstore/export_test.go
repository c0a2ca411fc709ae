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
