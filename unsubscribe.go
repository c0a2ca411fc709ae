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

// UnsubscribeLinker makes the List-Unsubscribe fields of one recipient's
// copy of marketing mail (package unsubscribe's Links).
type UnsubscribeLinker interface {
	// Fields returns the List-Unsubscribe and List-Unsubscribe-Post
	// fields of u's copy, whose envelope sender is at returnPath.
	Fields(u Unsubscribe, returnPath string) ([]Header, error)
}

// UnsubscribeStore is what the Unsubscribes service reads and writes: the
// suppression list, and, for a mailto unsubscribe, the message it names.
type UnsubscribeStore interface {
	SuppressionStore
	// ReportedMessage finds a message by id, whatever its account, with
	// its recipients; ECodeNotFound when there is none (ReportStore's).
	ReportedMessage(ctx context.Context, messageID string) (*Message, error)
}
