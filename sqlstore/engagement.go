package sqlstore

import (
	"context"

	"github.com/mailroom/mailroom"
)

// SHIM until issue 33's storage lands: nothing is tracked yet.

// SaveTrackedLinks implements mailroom.EngagementStore.
func (s *Store) SaveTrackedLinks(ctx context.Context, messageID string, links []string) error {
	return mailroom.Errorf(mailroom.ECodeInternal, "tracked links are not stored yet")
}

// RecordEngagement implements mailroom.EngagementStore.
func (s *Store) RecordEngagement(ctx context.Context, hit *mailroom.EngagementHit) (*mailroom.Event, error) {
	return nil, mailroom.Errorf(mailroom.ECodeInternal, "engagement is not stored yet")
}
