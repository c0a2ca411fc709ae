package sqlstore

import (
	"context"
	"errors"
	"time"

	"github.com/mailroom/mailroom"
)

var errTODO = errors.New("not built yet")

func (s *Store) CreateWebhook(ctx context.Context, e *mailroom.WebhookEndpoint, max int) error {
	return errTODO
}
func (s *Store) Webhook(ctx context.Context, accountID, id string) (*mailroom.WebhookEndpoint, error) {
	return nil, errTODO
}
func (s *Store) ListWebhooks(ctx context.Context, accountID string, page mailroom.Page) ([]*mailroom.WebhookEndpoint, string, error) {
	return nil, "", errTODO
}
func (s *Store) UpdateWebhook(ctx context.Context, e *mailroom.WebhookEndpoint) error { return errTODO }
func (s *Store) DeleteWebhook(ctx context.Context, accountID, id string) error       { return errTODO }
func (s *Store) InsertEventFor(ctx context.Context, e *mailroom.Event, endpointIDs []string) error {
	return errTODO
}
func (s *Store) AddWebhookDeliveries(ctx context.Context, accountID, eventID string, endpointIDs []string, now time.Time) error {
	return errTODO
}
func (s *Store) ClaimWebhookDeliveries(ctx context.Context, c mailroom.WebhookClaim) ([]*mailroom.WebhookDelivery, error) {
	return nil, errTODO
}
func (s *Store) RecordWebhookOutcomes(ctx context.Context, outcomes []*mailroom.WebhookOutcome, disableBefore time.Time) error {
	return errTODO
}
func (s *Store) ReleaseWebhookClaims(ctx context.Context, deliveries []*mailroom.WebhookDelivery) error {
	return errTODO
}
func (s *Store) WebhookBacklog(ctx context.Context) (int, time.Time, error) {
	return 0, time.Time{}, errTODO
}
func (s *Store) ListWebhookAttempts(ctx context.Context, accountID, endpointID string, f mailroom.WebhookAttemptFilter, page mailroom.Page) ([]*mailroom.WebhookAttempt, string, error) {
	return nil, "", errTODO
}
func (s *Store) DeleteExpiredWebhookData(ctx context.Context, cutoff time.Time, limit int) (int, error) {
	return 0, errTODO
}
func (s *Store) Event(ctx context.Context, accountID, id string) (*mailroom.Event, error) {
	return nil, errTODO
}
