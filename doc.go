// Package mailroom is the vocabulary of the Mailroom transactional email
// service: the domain's types, their validation, the pure policies (retry
// delay and outcome classification, the domain state machine, what a
// scope allows), the storage interfaces, the interfaces one feature asks
// of another (services.go), and the one coded error type that every other
// package returns.
//
// It imports no other package of the project, starts no goroutine and
// holds no service that talks to storage: each feature's service, its
// background loop and its token scheme live in the package named after the
// feature (send, template, domain, delivery, webhook, inbound, unsubscribe,
// submission, apikey, suppression, emaillog, retention), which imports
// this package and leaf utilities only, never another feature. Each
// dependency lives in its own package (sqlite, postgres, http, smtp, ...),
// and cmd/mailroom wires them together, in the manner of benbjohnson/wtf's
// Standard Package Layout. scripts/test checks the rule; docs/design.md
// is the map.
package mailroom
