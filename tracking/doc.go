// Package tracking is engagement tracking (docs/api.md "Engagement
// tracking"), off unless a domain or a send asks for it: the sealed
// tokens of tracked copies' addresses (tokens.go), the rewriting of each
// recipient's HTML before it is signed (html.go), what marks a request as
// a machine's (machine.go), and the service that answers the addresses
// and records opens and clicks (service.go).
package tracking
