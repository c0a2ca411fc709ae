// Package webhook is everything about webhooks (docs/api.md "Webhooks and
// events"): the endpoints service, the signature, the retry schedule, and
// the runtime that claims due deliveries from the outbox that storage
// fills in the transaction of each event, POSTs them in the wire format of
// Standard Webhooks (standardwebhooks.com), and records every attempt. The
// root package holds only the types (endpoints, deliveries, attempts) and
// the store's interface.
//
// The files are its rooms: service.go the endpoints service (endpoints
// and their sealed secrets, test, replay, the attempts log, the events
// list), sign.go the signature and the secret's form, policy.go the retry
// schedule and what counts as success, dispatcher.go the Dispatcher and
// its claim loop, run.go a Run's claims, starts and drain, slots.go the
// concurrency caps, client.go the HTTP client and its guard, attempt.go
// one POST, failure.go the words an attempt's error is told in,
// recorder.go the batched writes of outcomes, metrics.go what an operator
// can graph.
package webhook
