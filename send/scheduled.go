package send

import (
	"context"
	"time"

	"github.com/mailroom/mailroom"
)

// Scheduled serves the routes of sends that wait for their time
// (docs/api.md "Scheduled sends"): listing them, moving them and canceling
// them. The time itself is kept by the delivery queue: a scheduled
// message's recipients are due at its scheduledAt, and the claim that takes
// them starts the message (see MessageStore.ClaimDueRecipients).
type Scheduled struct {
	Store mailroom.MessageStore
	Now   func() time.Time
	// Queued and Scheduled wake the local worker, as Sender's do.
	Queued    func()
	Scheduled func(at time.Time)
}

// RescheduleRequest is the body of PATCH /v1/scheduled/{messageId}.
type RescheduleRequest struct {
	ScheduledAt *string `json:"scheduledAt"`
}

// List lists the account's scheduled messages, soonest first.
func (s *Scheduled) List(ctx context.Context, accountID string, page mailroom.Page) ([]*mailroom.Message, string, error) {
	return s.Store.ListScheduled(ctx, accountID, page)
}

// Reschedule moves a scheduled message to the time req gives, by the
// rules of a send's scheduledAt; a time that counts as now sends it now.
// It returns the message as the log shows it.
func (s *Scheduled) Reschedule(ctx context.Context, accountID, id string, req *RescheduleRequest) (*mailroom.Message, []*mailroom.Event, error) {
	if req.ScheduledAt == nil {
		var v mailroom.Validator
		v.Add("scheduledAt", `is required: the new time, in RFC 3339 such as "2026-11-22T10:00:00Z"`)
		return nil, nil, v.Err()
	}
	now := s.Now().UTC()
	at, err := mailroom.ParseScheduledAt(*req.ScheduledAt, now)
	if err != nil {
		return nil, nil, err
	}
	if err := s.Store.RescheduleMessage(ctx, accountID, id, *at, now); err != nil {
		return nil, nil, err
	}
	switch {
	case !at.After(now) && s.Queued != nil:
		s.Queued()
	case at.After(now) && s.Scheduled != nil:
		s.Scheduled(*at)
	}
	return s.Store.Message(ctx, accountID, id)
}

// Cancel cancels a scheduled message and returns it as the log shows it.
func (s *Scheduled) Cancel(ctx context.Context, accountID, id string) (*mailroom.Message, []*mailroom.Event, error) {
	if err := s.Store.CancelMessage(ctx, accountID, id, s.Now().UTC()); err != nil {
		return nil, nil, err
	}
	return s.Store.Message(ctx, accountID, id)
}
