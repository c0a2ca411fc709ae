package sqlstore

import (
	"context"
	"time"

	"github.com/mailroom/mailroom"
)

var _ mailroom.SiteSuspensionStore = (*Store)(nil)

// SuspendSite records a site key's suspension (migration 00017), replacing
// the key's earlier one. When two nodes suspend one key at once, the
// suspension that ends later stands, whichever is written last: a node
// that had not yet read the other's never shortens it.
func (s *Store) SuspendSite(ctx context.Context, sus mailroom.SiteSuspension) error {
	_, err := s.write.ExecContext(ctx, `INSERT INTO site_suspensions (site, source, until, level) VALUES ($1, $2, $3, $4)
		ON CONFLICT (site, source) DO UPDATE SET until = excluded.until, level = excluded.level
		WHERE site_suspensions.until < excluded.until`,
		sus.Key.Site, sus.Key.Source, micros(sus.Until), sus.Level)
	return s.wrap(err, "suspend site")
}

// SiteSuspensions lists the suspensions that end after since, by site and
// source (site_suspensions_by_until serves it).
func (s *Store) SiteSuspensions(ctx context.Context, since time.Time) ([]mailroom.SiteSuspension, error) {
	rows, err := s.readQuery(ctx, `SELECT site, source, until, level FROM site_suspensions WHERE until > $1
		ORDER BY site, source`, micros(since))
	if err != nil {
		return nil, s.wrap(err, "site suspensions")
	}
	out, err := collect(rows, func(r scanner) (mailroom.SiteSuspension, error) {
		var sus mailroom.SiteSuspension
		var until int64
		err := r.Scan(&sus.Key.Site, &sus.Key.Source, &until, &sus.Level)
		sus.Until = fromMicros(until)
		return sus, err
	})
	return out, s.wrap(err, "site suspensions")
}
