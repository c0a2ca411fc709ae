// Package inbound is the return-path MX (docs/api.md "Mail coming back"):
// an SMTP server (go-smtp) that takes mail only for the bounce subdomains
// of the domains the service sends for, and the parsers that read what
// arrives there (delivery status notifications, RFC 3464; complaints,
// RFC 5965; automatic replies, RFC 3834). What a report changes is the
// Reports service's (reports.go), which matches it to the message through
// the return-path token every delivery's envelope sender carries
// (returnpath.go).
//
// With a Server.Receiver, the same MX also takes every address of the
// customers' receiving domains (docs/api.md "Receiving mail") and hands
// each such message, whole, to it (receive.go): what is checked and
// stored of it is package receiving's.
package inbound

import (
	"context"

	"github.com/mailroom/mailroom"
)

// Handler is what the server asks about each recipient and hands each
// report to: Reports.
type Handler interface {
	// Accepts says whether rcpt is an address this MX takes mail for (at
	// the bounce subdomain of a domain some account has verified).
	Accepts(ctx context.Context, rcpt string) (bool, error)
	// Apply processes the report r, received for rcpt (a message with
	// several accepted recipients is applied once for each).
	Apply(ctx context.Context, rcpt string, r *mailroom.Report) error
}
