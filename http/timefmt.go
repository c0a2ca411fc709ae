package http

import "time"

// timestamp formats t as the API shows times: RFC 3339 in UTC, to the second.
func timestamp(t time.Time) string { return t.UTC().Format(time.RFC3339) }

// optTimestamp is timestamp for optional times: null when unset.
func optTimestamp(t *time.Time) *string {
	if t == nil {
		return nil
	}
	s := timestamp(*t)
	return &s
}
