package mailroom

import "context"

// One-click unsubscribe (RFC 8058, RFC 2369) for marketing mail
// (docs/api.md "Mail coming back"); package unsubscribe makes the links
// and answers them.

// Unsubscribe is what an unsubscribe token names: an address of an
// account, and the message whose copy carried the link.
type Unsubscribe struct {
	AccountID string
	MessageID string
	Address   string
}

// UnsubscribeStore is what package unsubscribe's Service reads and writes: the
// suppression list, and, for a mailto unsubscribe, the message it names.
type UnsubscribeStore interface {
	SuppressionStore
	// ReportedMessage finds a message by id, whatever its account, with
	// its recipients; ECodeNotFound when there is none (ReportStore's).
	ReportedMessage(ctx context.Context, messageID string) (*Message, error)
}
