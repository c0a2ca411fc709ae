package webhook

import (
	"context"
	"fmt"
	"time"

	"github.com/mailroom/mailroom"
)

// Service is the service behind webhook endpoints and the events they
// carry (docs/api.md "Webhooks and events"): managing endpoints and their
// secrets, the debugging tools (test, replay, the attempts log) and the
// events list. Deliveries themselves are made by package webhook.
type Service struct {
	Store interface {
		mailroom.WebhookStore
		mailroom.EventStore
	}
	Sealer mailroom.Sealer
	// CheckURL refuses a URL the service must not call (package netguard:
	// https only, no private or loopback address unless the operator
	// allows them); it says what is wrong in words for the customer.
	CheckURL func(ctx context.Context, url string) error
	// Max is how many endpoints an account may have; 0 means
	// DefaultMaxWebhooks.
	Max int
	Now func() time.Time
	// Wake tells the local dispatcher that deliveries are waiting; nil
	// leaves them to its next poll.
	Wake func()
}

// Create adds an endpoint and returns it with its secret, which is shown
// this once.
func (s *Service) Create(ctx context.Context, accountID string, req *Request) (*mailroom.WebhookEndpoint, string, error) {
	c, err := req.Validate(true)
	if err != nil {
		return nil, "", err
	}
	now := s.Now().UTC()
	e := &mailroom.WebhookEndpoint{ID: mailroom.NewID(mailroom.PrefixWebhook, now), AccountID: accountID, URL: *c.URL, Events: c.Events,
		Enabled: true, Format: mailroom.WebhookFormatMailroom, CreatedAt: now, UpdatedAt: now}
	if c.Format != nil {
		e.Format = *c.Format
	}
	if c.Description != nil {
		e.Description = *c.Description
	}
	if err := s.checkURL(ctx, e.URL); err != nil {
		return nil, "", err
	}
	key, secret := NewSecret()
	e.SecretSealed = s.Sealer.Seal(key, []byte(e.ID))
	max := s.Max
	if max <= 0 {
		max = mailroom.DefaultMaxWebhooks
	}
	if err := s.Store.CreateWebhook(ctx, e, max); err != nil {
		return nil, "", err
	}
	return e, secret, nil
}

func (s *Service) checkURL(ctx context.Context, url string) error {
	if err := s.CheckURL(ctx, url); err != nil {
		var v mailroom.Validator
		v.Add("url", "%s", mailroom.OwnText(err.Error()))
		return v.Err()
	}
	return nil
}

// Get returns one of an account's endpoints.
func (s *Service) Get(ctx context.Context, accountID, id string) (*mailroom.WebhookEndpoint, error) {
	return s.Store.Webhook(ctx, accountID, id)
}

// List lists an account's endpoints newest first.
func (s *Service) List(ctx context.Context, accountID string, page mailroom.Page) ([]*mailroom.WebhookEndpoint, string, error) {
	return s.Store.ListWebhooks(ctx, accountID, page)
}

// Update changes the fields req gives. A new URL is checked as a created
// one is. Turning an endpoint on clears the reason it was off and its
// failing time, so that it gets its five days again.
func (s *Service) Update(ctx context.Context, accountID, id string, req *Request) (*mailroom.WebhookEndpoint, error) {
	c, err := req.Validate(false)
	if err != nil {
		return nil, err
	}
	if c.URL != nil {
		if err := s.checkURL(ctx, *c.URL); err != nil {
			return nil, err
		}
	}
	if c.Enabled != nil && !*c.Enabled {
		c.DisabledReason = "Turned off through the API."
	}
	return s.Store.UpdateWebhook(ctx, accountID, id, c, s.Now().UTC())
}

// Delete removes an endpoint, its pending deliveries and its attempts.
func (s *Service) Delete(ctx context.Context, accountID, id string) error {
	return s.Store.DeleteWebhook(ctx, accountID, id)
}

// RotateSecret gives an endpoint a new secret and returns it. The one it
// replaces keeps signing beside it for WebhookRotationOverlap, so that the
// consumer can switch without refusing a delivery; rotating again within
// that time drops the oldest.
func (s *Service) RotateSecret(ctx context.Context, accountID, id string) (string, *mailroom.WebhookEndpoint, error) {
	now := s.Now().UTC()
	key, secret := NewSecret()
	e, err := s.Store.RotateWebhookSecret(ctx, accountID, id, s.Sealer.Seal(key, []byte(id)), now.Add(mailroom.WebhookRotationOverlap), now)
	if err != nil {
		return "", nil, err
	}
	return secret, e, nil
}

// SigningKeys returns the keys that sign a delivery to e at now: its
// secret, and the one it replaced while that still overlaps.
func (s *Service) SigningKeys(e *mailroom.WebhookEndpoint, now time.Time) ([][]byte, error) {
	key, err := s.Sealer.Open(e.SecretSealed, []byte(e.ID))
	if err != nil {
		return nil, fmt.Errorf("open the secret of %s (is --secret-key the one it was sealed with?): %w", e.ID, err)
	}
	keys := [][]byte{key}
	if e.PreviousSecretSigns(now) {
		old, err := s.Sealer.Open(e.PreviousSecretSealed, []byte(e.ID))
		if err != nil {
			return nil, fmt.Errorf("open the previous secret of %s: %w", e.ID, err)
		}
		keys = append(keys, old)
	}
	return keys, nil
}

// SigningSecret is e's current secret in its whsec_ form. /v1 shows a
// secret only when it is made (create, rotate); Resend's GET
// /webhooks/{id} shows it every time, to a key with the webhooks scope,
// and the sealed key can be opened, so it can be shown again.
func (s *Service) SigningSecret(e *mailroom.WebhookEndpoint) (string, error) {
	key, err := s.Sealer.Open(e.SecretSealed, []byte(e.ID))
	if err != nil {
		return "", fmt.Errorf("open the secret of %s (is --secret-key the one it was sealed with?): %w", e.ID, err)
	}
	return SecretString(key), nil
}

// webhookTestData is the data of a webhook.test event.
type webhookTestData struct {
	WebhookID string `json:"webhookId"`
	Message   string `json:"message"`
}

// Test sends a webhook.test event to one endpoint now, whatever types it
// subscribes to, and returns the event.
func (s *Service) Test(ctx context.Context, accountID, id string) (*mailroom.Event, error) {
	e, err := s.Store.Webhook(ctx, accountID, id)
	if err != nil {
		return nil, err
	}
	if !e.Enabled {
		return nil, mailroom.Errorf(mailroom.ECodeInvalidState, "Webhook %s is disabled; PATCH it with \"enabled\": true first.", id)
	}
	ev, err := mailroom.NewEvent(accountID, mailroom.EventWebhookTest, webhookTestData{WebhookID: id,
		Message: "A test event from Mailroom: this endpoint receives and verifies deliveries."}, s.Now().UTC())
	if err != nil {
		return nil, err
	}
	if err := s.Store.InsertEventFor(ctx, ev, []string{id}); err != nil {
		return nil, err
	}
	s.wake()
	return ev, nil
}

// Replay queues a stored event again, with its own id, to every enabled
// endpoint that subscribes to its type, or to the endpoint named (which
// must be enabled and subscribe to it). It returns the endpoints.
func (s *Service) Replay(ctx context.Context, accountID, eventID, endpointID string) ([]string, error) {
	ev, err := s.Store.Event(ctx, accountID, eventID)
	if err != nil {
		return nil, err
	}
	var targets []string
	if endpointID != "" {
		e, err := s.Store.Webhook(ctx, accountID, endpointID)
		if err != nil {
			return nil, err
		}
		switch {
		case !e.Enabled:
			return nil, mailroom.Errorf(mailroom.ECodeInvalidState, "Webhook %s is disabled; PATCH it with \"enabled\": true first.", endpointID)
		case !e.Subscribes(ev.Type) && ev.Type != mailroom.EventWebhookTest:
			return nil, mailroom.Errorf(mailroom.ECodeInvalidState, "Webhook %s does not subscribe to %s events.", endpointID, ev.Type)
		}
		targets = []string{e.ID}
	} else if ev.Type == mailroom.EventWebhookTest {
		return nil, mailroom.Errorf(mailroom.ECodeInvalidState, "A webhook.test event is replayed only to an endpoint you name: ?endpoint=wh_….")
	} else {
		all, err := s.allEndpoints(ctx, accountID)
		if err != nil {
			return nil, err
		}
		for _, e := range all {
			if e.Enabled && e.Subscribes(ev.Type) {
				targets = append(targets, e.ID)
			}
		}
		if len(targets) == 0 {
			return nil, mailroom.Errorf(mailroom.ECodeInvalidState, "No enabled webhook subscribes to %s events; name one with ?endpoint=wh_….", ev.Type)
		}
	}
	if err := s.Store.AddWebhookDeliveries(ctx, accountID, ev.ID, targets, s.Now().UTC()); err != nil {
		return nil, err
	}
	s.wake()
	return targets, nil
}

// All lists every endpoint of an account, newest first: at most Max, a few
// pages of the store (Resend's GET /webhooks pages by id over them).
func (s *Service) All(ctx context.Context, accountID string) ([]*mailroom.WebhookEndpoint, error) {
	return s.allEndpoints(ctx, accountID)
}

// allEndpoints reads every endpoint of an account: at most Max, a few pages.
func (s *Service) allEndpoints(ctx context.Context, accountID string) ([]*mailroom.WebhookEndpoint, error) {
	var all []*mailroom.WebhookEndpoint
	cursor := ""
	for {
		page, next, err := s.Store.ListWebhooks(ctx, accountID, mailroom.Page{Limit: mailroom.MaxPageLimit, Cursor: cursor})
		if err != nil {
			return nil, err
		}
		all = append(all, page...)
		if next == "" {
			return all, nil
		}
		cursor = next
	}
}

// Attempts lists an endpoint's attempts newest first.
func (s *Service) Attempts(ctx context.Context, accountID, id string, f mailroom.WebhookAttemptFilter, page mailroom.Page) ([]*mailroom.WebhookAttempt, string, error) {
	if _, err := s.Store.Webhook(ctx, accountID, id); err != nil {
		return nil, "", err
	}
	return s.Store.ListWebhookAttempts(ctx, accountID, id, f, page)
}

// Events lists an account's events newest first.
func (s *Service) Events(ctx context.Context, accountID string, f mailroom.EventFilter, page mailroom.Page) ([]*mailroom.Event, string, error) {
	return s.Store.ListEvents(ctx, accountID, f, page)
}

func (s *Service) wake() {
	if s.Wake != nil {
		s.Wake()
	}
}
