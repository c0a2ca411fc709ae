// Package mailroom holds the domain of the Mailroom transactional email
// service: its types, their validation, the storage interface and the one
// coded error type that every other package returns.
//
// It imports no other package of the project. Each dependency lives in its
// own package that implements or consumes these interfaces (sqlite, postgres,
// http, ...) and cmd/mailroom wires them together, in the manner of
// benbjohnson/wtf's Standard Package Layout.
package mailroom
