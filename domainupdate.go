package mailroom

// DomainUpdate is a change to a sending domain's settings (PATCH
// /v1/domains/{domain}, `mailroom domains update`): each field that is
// not nil is set, the others are left as they are. Later settings
// (receiving, tracking) join it as further optional fields.
type DomainUpdate struct {
	// TLS is the domain's tls (docs/api.md "TLS policy"); callers
	// validate it with ParseTLSMode.
	TLS *TLSMode
	// IPPool is the pool of source addresses ("" the default pool);
	// callers validate it with ValidIPPoolName. The operator's alone:
	// the API shows it and does not set it.
	IPPool *string
	// DKIMEd25519 adds (true) or removes (false) the domain's Ed25519
	// DKIM key and its record (RFC 8463; docs/api.md "Domains").
	DKIMEd25519 *bool
	// Ed25519Key is the key to add when DKIMEd25519 is true and the
	// domain has none yet, sealed: package domain makes it (it has the
	// sealer) before the store's transaction, which keeps the domain's
	// own key if it has one (SetDKIMEd25519).
	Ed25519Key *DomainDKIMKey
	// Receiving turns the domain's receiving of mail on or off
	// (docs/api.md "Receiving mail"), with its MX record, ReceivingRecord:
	// package domain makes the record (it has the record settings).
	Receiving       *bool
	ReceivingRecord *DNSRecord
	// OpenTracking and ClickTracking set the domain's Tracking
	// (docs/api.md "Engagement tracking"), for the sends accepted after.
	OpenTracking  *bool
	ClickTracking *bool
}

// Empty reports whether u changes nothing.
func (u DomainUpdate) Empty() bool {
	return u.TLS == nil && u.IPPool == nil && u.DKIMEd25519 == nil && u.Receiving == nil &&
		u.OpenTracking == nil && u.ClickTracking == nil
}
