// Package resend is Resend's wire protocol, translated to and from
// Mailroom's vocabulary (docs/api.md "Moving from Resend"): the request
// and answer shapes of Resend's routes with their snake_case names, every
// input form Resend's official SDKs send (a recipient as a string or a
// list, attachment content as base64 text, as an array of byte values or
// as Node's Buffer object, scheduled_at as a time or as "in 5 minutes"),
// Resend's error names, its last_event names for a message's state, and
// its webhook payload and event names.
//
// It holds no rule of its own: what a send may be, when a key is
// refused, how a batch's idempotency key covers its items are the
// services' (send, apikey, webhook), which /v1 calls too. It is a leaf:
// it imports the root and other leaves only, so that the HTTP surface
// (package http's resend*.go, which serves the routes) and the webhook
// feature (which writes Resend's payload for endpoints that asked for it)
// both translate through it.
package resend
