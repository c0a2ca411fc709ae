// Package api holds the wire types of Mailroom's HTTPS JSON API: every
// request body and every response body of every route in the OpenAPI
// document the service publishes (GET /v1/openapi.json), with the JSON
// names the API uses, and the API's enumerations (statuses, event types,
// scopes, error codes) as typed string constants.
//
// It depends on the standard library only, so that the service, its test
// client and the Go client (package github.com/mailroom/mailroom/client)
// share one definition of every shape.
//
// Conventions, as in docs/api.md:
//
//   - Field names are camelCase, exactly as on the wire.
//   - A field the API writes as null when it has no value is a pointer
//     (a nil pointer is null); it is never left out. A field the API leaves
//     out when it has no value carries omitempty. Everything else is always
//     present.
//   - Times are time.Time. The API writes them in RFC 3339, in UTC, to the
//     second ("2026-11-22T10:00:00Z"); a time.Time in UTC holding whole
//     seconds marshals to exactly that (see [Second]). The body of a webhook
//     delivery is the one place with milliseconds.
//   - Request bodies leave out what the caller did not set (omitempty), so
//     that the service's defaults apply.
package api

import "time"

// Second returns t as the API writes times: in UTC, cut to the second. A
// time.Time so made marshals as "2006-01-02T15:04:05Z".
func Second(t time.Time) time.Time { return t.UTC().Truncate(time.Second) }
