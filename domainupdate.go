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
}

// Empty reports whether u changes nothing.
func (u DomainUpdate) Empty() bool { return u.TLS == nil && u.IPPool == nil }
