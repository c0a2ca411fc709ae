// Package webhook is the webhook runtime (docs/api.md "Webhooks and
// events"): it claims due deliveries from the outbox that storage fills in
// the transaction of each event, POSTs them in the wire format of Standard
// Webhooks (standardwebhooks.com), and records every attempt. The policies
// it applies (the retry schedule, what counts as success, the signature)
// live in the root package; this package only runs them, as package
// delivery does for mail.
//
// The files are its rooms: dispatcher.go the Dispatcher and its claim
// loop, run.go a Run's claims, starts and drain, slots.go the concurrency
// caps, client.go the HTTP client and its guard, attempt.go
// one POST, failure.go the words an attempt's error is told in,
// recorder.go the batched writes of outcomes, metrics.go what an operator
// can graph.
package webhook
