package http

import (
	"time"

	"github.com/mailroom/mailroom/client/api"
)

// wireTime is t as the API shows times: RFC 3339 in UTC, to the second.
// Cut by api.Second, a time of the years 0..9999 (every time the service
// keeps) marshals as t.UTC().Format(time.RFC3339) writes it,
// "2026-11-22T10:00:00Z": no fraction, no offset.
func wireTime(t time.Time) time.Time { return api.Second(t) }

// optWireTime is wireTime for optional times: nil (null) when unset.
func optWireTime(t *time.Time) *time.Time {
	if t == nil {
		return nil
	}
	s := wireTime(*t)
	return &s
}
