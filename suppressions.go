package mailroom

import (
	"context"
	"time"
)

// Suppressions is the service behind the suppression list as clients manage
// it (docs/api.md "Suppressions"). The rules live here, not in a handler, so that the API,
// the command line and the dashboard cannot disagree on them: which address
// may be added, and when an add created an entry.
type Suppressions struct {
	Store SuppressionStore
	// Now is the clock; nil means time.Now.
	Now func() time.Time
}

func (s *Suppressions) now() time.Time {
	if s.Now != nil {
		return s.Now().UTC()
	}
	return time.Now().UTC()
}

// Add suppresses address for the account by hand (reason manual). created
// is true when this call added the entry; when the address was suppressed
// already, the entry there is returned unchanged and created is false: a
// hard bounce or a complaint stays what it was, since it says more than a
// manual entry would. An unsubscribe entry, which stops marketing mail
// only, is the exception: the manual entry replaces it (created is true),
// since whoever adds one by hand means to stop all mail.
//
// The store keeps an existing entry and returns it, so the entry is new
// exactly when it is the one asked for. Two adds of one address in the same
// microsecond would both say created; nothing else can.
func (s *Suppressions) Add(ctx context.Context, accountID, address string) (sup *Suppression, created bool, err error) {
	a, err := ParseAddress(address)
	if err != nil {
		var v Validator
		v.Add("address", "%s", OwnText(err.(*Error).Message))
		return nil, false, v.Err()
	}
	// Truncated to what storage keeps, so that the comparison below
	// compares like with like.
	want := &Suppression{AccountID: accountID, Address: a.Address, Reason: SuppressedManual,
		CreatedAt: s.now().Truncate(time.Microsecond)}
	sup, err = s.Store.AddSuppression(ctx, want)
	if err != nil {
		return nil, false, err
	}
	created = sup.Reason == want.Reason && sup.MessageID == want.MessageID && sup.CreatedAt.Equal(want.CreatedAt)
	return sup, created, nil
}

// Get returns the account's entry for address (any case), or an
// ECodeNotFound error when the address is not suppressed.
func (s *Suppressions) Get(ctx context.Context, accountID, address string) (*Suppression, error) {
	return s.Store.Suppression(ctx, accountID, address)
}

// List returns one page of the account's entries, newest first.
func (s *Suppressions) List(ctx context.Context, accountID string, page Page) ([]*Suppression, string, error) {
	return s.Store.ListSuppressions(ctx, accountID, page)
}

// Delete removes the account's entry for address, so that mail to it is
// attempted again; an address not suppressed is ECodeNotFound.
func (s *Suppressions) Delete(ctx context.Context, accountID, address string) error {
	return s.Store.DeleteSuppression(ctx, accountID, address)
}
