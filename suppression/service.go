package suppression

import (
	"context"
	"time"

	"github.com/mailroom/mailroom"
)

// Service is the service behind the suppression list as clients manage
// it (docs/api.md "Suppressions"). The rules live here, not in a handler, so that the API,
// the command line and the dashboard cannot disagree on them: which address
// may be added, and when an add created an entry.
type Service struct {
	Store mailroom.SuppressionStore
	// Now is the clock; nil means time.Now.
	Now func() time.Time
}

func (s *Service) now() time.Time {
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
func (s *Service) Add(ctx context.Context, accountID, address string) (sup *mailroom.Suppression, created bool, err error) {
	a, err := mailroom.ParseAddress(address)
	if err != nil {
		var v mailroom.Validator
		v.Add("address", "%s", mailroom.OwnText(err.(*mailroom.Error).Message))
		return nil, false, v.Err()
	}
	// Truncated to what storage keeps, so that the comparison below
	// compares like with like.
	want := &mailroom.Suppression{AccountID: accountID, Address: a.Address, Reason: mailroom.SuppressedManual,
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
func (s *Service) Get(ctx context.Context, accountID, address string) (*mailroom.Suppression, error) {
	return s.Store.Suppression(ctx, accountID, address)
}

// List returns one page of the account's entries, newest first.
func (s *Service) List(ctx context.Context, accountID string, page mailroom.Page) ([]*mailroom.Suppression, string, error) {
	return s.Store.ListSuppressions(ctx, accountID, page)
}

// Delete removes the account's entry for address, so that mail to it is
// attempted again; an address not suppressed is ECodeNotFound.
func (s *Service) Delete(ctx context.Context, accountID, address string) error {
	return s.Store.DeleteSuppression(ctx, accountID, address)
}
