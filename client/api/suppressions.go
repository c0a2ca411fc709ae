package api

import "time"

// SuppressionReason says why an address is suppressed.
type SuppressionReason string

const (
	SuppressedHardBounce  SuppressionReason = "hard_bounce" // a 5.1.x bounce; stops all mail
	SuppressedComplaint   SuppressionReason = "complaint"   // an abuse report; stops all mail
	SuppressedManual      SuppressionReason = "manual"      // POST /v1/suppressions; stops all mail
	SuppressedUnsubscribe SuppressionReason = "unsubscribe" // the recipient's one-click unsubscribe; stops marketing mail only
)

// SuppressionRequest is the body of POST /v1/suppressions.
type SuppressionRequest struct {
	Address string `json:"address"`
}

// Suppression is an entry of the suppression list (OpenAPI schema
// Suppression). Addresses are kept in lower case.
type Suppression struct {
	Address   string            `json:"address"`
	Reason    SuppressionReason `json:"reason"`
	CreatedAt time.Time         `json:"createdAt"`
	// MessageID names the message whose bounce, complaint or unsubscribe
	// link added the entry; null for a manual one.
	MessageID *string `json:"messageId"`
}

// Unsubscribed answers POST /v1/unsubscribe/{token} with a JSON body
// (OpenAPI schema Unsubscribed). That route is the mail recipient's, not an
// API client's: it takes no key, and package client has no method for it.
type Unsubscribed struct {
	// Status is always "unsubscribed".
	Status  string `json:"status"`
	Address string `json:"address"`
}
