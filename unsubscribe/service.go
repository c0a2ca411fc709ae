package unsubscribe

import (
	"context"
	"time"

	"github.com/mailroom/mailroom"
)

// Service applies one-click unsubscribes (docs/api.md "Mail coming
// back", RFC 8058): a link's POST, or a mail to its mailto address,
// suppresses that address for the account's marketing mail, reason
// unsubscribe. The rule lives here so that the HTTPS route and the
// return-path MX cannot disagree.
type Service struct {
	Tokens Tokens
	Store  mailroom.UnsubscribeStore
	// Now is the clock; nil means time.Now.
	Now func() time.Time
}

func (s *Service) now() time.Time {
	if s.Now != nil {
		return s.Now().UTC()
	}
	return time.Now().UTC()
}

// Check returns what a link's token names, without changing anything: the
// confirmation page a GET shows (link scanners follow GETs, so a GET must
// never unsubscribe). A token that does not verify is ECodeNotFound.
func (s *Service) Check(token string) (mailroom.Unsubscribe, error) {
	return s.Tokens.Open(token)
}

// Unsubscribe applies a link's token: the address it names is suppressed
// for the account's marketing mail. It is idempotent: an address already
// suppressed keeps its entry (a second POST changes nothing, and a hard
// bounce or a complaint, which stop all mail, stay what they are).
//
// It writes no event: the event types are fixed (docs/api.md "Webhooks
// and events") and the message's recipient keeps its delivery state; the
// suppression entry names the message whose link was used.
func (s *Service) Unsubscribe(ctx context.Context, token string) (mailroom.Unsubscribe, error) {
	u, err := s.Tokens.Open(token)
	if err != nil {
		return mailroom.Unsubscribe{}, err
	}
	return u, s.Apply(ctx, u)
}

// Apply suppresses what an opened token names, as Unsubscribe does.
func (s *Service) Apply(ctx context.Context, u mailroom.Unsubscribe) error {
	_, err := s.Store.AddSuppression(ctx, &mailroom.Suppression{AccountID: u.AccountID, Address: mailroom.AddressKey(u.Address),
		Reason: mailroom.SuppressedUnsubscribe, MessageID: u.MessageID, CreatedAt: s.now().Truncate(time.Microsecond)})
	return err
}

// UnsubscribeByMail applies a mail received at a mailto unsubscribe
// address whose local part is localPart (RFC 2369 §3.2; the return-path
// MX calls it for IsUnsubscribeLocalPart addresses). ok is false when the
// local part does not verify against the message it names, or the message
// has left the log: nothing changes then.
func (s *Service) UnsubscribeByMail(ctx context.Context, localPart string) (u mailroom.Unsubscribe, ok bool, err error) {
	u, ok, err = s.Tokens.OpenLocalPart(localPart, func(id string) (*mailroom.Message, error) {
		m, err := s.Store.ReportedMessage(ctx, id)
		if mailroom.IsCode(err, mailroom.ECodeNotFound) {
			return nil, nil
		}
		return m, err
	})
	if err != nil || !ok {
		return mailroom.Unsubscribe{}, false, err
	}
	return u, true, s.Apply(ctx, u)
}

// IsUnsubscribeLocalPart says whether a local part has the form of a
// mailto unsubscribe address (IsUnsubscribeLocalPart).
func (s *Service) IsUnsubscribeLocalPart(localPart string) bool {
	return IsUnsubscribeLocalPart(localPart)
}
