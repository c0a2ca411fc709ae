package api

import "time"

// RescheduleRequest is the body of PATCH /v1/scheduled/{messageId} (OpenAPI
// schema RescheduleRequest): the new time, by the rules of a send's
// scheduledAt. A time not after now (within 60 s) sends the message now.
//
// GET /v1/scheduled answers a List of Message (without events); PATCH and
// DELETE /v1/scheduled/{messageId} answer the Message with its events.
type RescheduleRequest struct {
	ScheduledAt time.Time `json:"scheduledAt"`
}
