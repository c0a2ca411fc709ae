package submission

import (
	"context"
	"io"
	"time"

	"github.com/mailroom/mailroom"
)

// Service is the service behind SMTP submission (docs/api.md "SMTP
// submission"; package submission is its server): the API's key checks
// and rate limits, and a message taken as the client wrote it into the
// accept path of POST /v1/send, so that it is in the log, obeys the
// suppression list and the recipient limit, and its events go to
// webhooks like any send's.
//
// Unlike a send, the message is DKIM-signed at accept, not at its first
// attempt: it has no fields to compose from, and the signed bytes are
// stored with it (Message.Raw), sent as they are and shown by the log's
// raw view.
type Service struct {
	// Auth checks the AUTH password, an API key, as the HTTP API checks a
	// bearer key.
	Auth    mailroom.KeyAuthenticator
	Store   mailroom.MessageStore
	Domains mailroom.SendingDomains
	// Signer signs the message with its From domain's key
	// (compose.Composer).
	Signer mailroom.RawSigner
	// Admit takes one request of an account from its rate limit and says
	// whether it may go on (ratelimit.Limiter's Allow); nil admits all.
	Admit func(accountID string) bool
	Now   func() time.Time
	// Queued is told when a message is queued, so that the local workers
	// start at once instead of at their next poll (as Sender.Queued).
	Queued func()
}

// Authenticate checks an AUTH password: an API key, with the checks of the
// HTTP API (Authenticator.Authenticate: checksum, digest, revocation, the
// same work for an unknown id and a wrong secret), and scope send.
func (s *Service) Authenticate(ctx context.Context, password string) (*mailroom.APIKey, error) {
	key, err := s.Auth.Authenticate(ctx, password)
	if err != nil {
		return nil, err
	}
	if err := mailroom.RequireScope(key, mailroom.ScopeSend); err != nil {
		return nil, err
	}
	return key, nil
}

// Allow says whether key's account may make one more request now.
func (s *Service) Allow(key *mailroom.APIKey) bool {
	return s.Admit == nil || s.Admit(key.AccountID)
}

// Submit accepts one message for the envelope recipients and returns its
// id once it is committed; a retry under the message's Idempotency-Key
// returns the first message's id and stores nothing. raw is read whole
// (at most MaxSubmittedMessageBytes).
//
// The key is read again first: a session outlives its AUTH, and a key
// revoked since must stop it at its next message, as the next request of
// the HTTP API.
func (s *Service) Submit(ctx context.Context, key *mailroom.APIKey, env Envelope, raw io.Reader) (string, error) {
	if err := s.Auth.Recheck(ctx, key); err != nil {
		return "", err
	}
	data, err := io.ReadAll(io.LimitReader(raw, MaxSubmittedMessageBytes+1))
	if err != nil {
		// Nothing is stored of a message not read whole; the server
		// knows why its reader failed and answers for it.
		return "", &mailroom.Error{Code: mailroom.ECodeValidation, Message: "The message could not be read whole.", Cause: err}
	}
	if len(data) > MaxSubmittedMessageBytes {
		return "", mailroom.Errorf(mailroom.ECodePayloadTooLarge, "The message is larger than %d MiB.", MaxSubmittedMessageBytes>>20)
	}
	now := s.Now().UTC()
	m, envelopeDomain, err := newSubmittedMessage(mailroom.NewID(mailroom.PrefixMessage, now), now, env.MailFrom, env.Rcpts, data)
	if err != nil {
		return "", err
	}
	if env.RequireTLS {
		m.RequireTLS, m.RequestDigest = true, requireTLSDigest(m.RequestDigest)
	}
	m.AccountID = key.AccountID
	if m.IdempotencyKey != "" {
		// A retry is answered as the first submission was, whatever
		// became of the domains since, and costs no signature.
		res, err := s.Store.IdempotentMessage(ctx, m.AccountID, m.IdempotencyKey, m.RequestDigest)
		if !mailroom.IsCode(err, mailroom.ECodeNotFound) {
			return res.MessageID, err
		}
	}
	if err := checkKeyDomains(key, m.Domain, envelopeDomain); err != nil {
		return "", err
	}
	if err := s.checkDomains(ctx, m, envelopeDomain); err != nil {
		return "", err
	}
	if m.Raw, err = s.sign(ctx, m); err != nil {
		return "", err
	}
	res, err := s.Store.AcceptMessage(ctx, m)
	if err != nil {
		return "", err
	}
	if res.Status == mailroom.MessageQueued && !res.Duplicate && s.Queued != nil {
		s.Queued()
	}
	return res.MessageID, nil
}

// checkKeyDomains requires a key restricted to one domain to submit from
// it alone, in the From header and in the envelope sender, as a send with
// the key through the API would (mailroom.APIKey.CheckSendingFrom).
func checkKeyDomains(key *mailroom.APIKey, fromDomain, envelopeDomain string) error {
	if err := key.CheckSendingFrom("From header's", fromDomain); err != nil {
		return err
	}
	return key.CheckSendingFrom("envelope sender's", envelopeDomain)
}

// checkDomains requires the From header's domain and the envelope
// sender's to be domains the account may send from (Domains.
// CheckSendingDomain, as a send's), saying which one is not.
func (s *Service) checkDomains(ctx context.Context, m *mailroom.Message, envelopeDomain string) error {
	if err := s.checkDomain(ctx, m.AccountID, m.Domain, "From header's"); err != nil {
		return err
	}
	if envelopeDomain == m.Domain {
		return nil
	}
	return s.checkDomain(ctx, m.AccountID, envelopeDomain, "envelope sender's")
}

func (s *Service) checkDomain(ctx context.Context, accountID, domain, whose string) error {
	// A submitted message is signed as its client wrote it, so it is never
	// tracked: the domain's tracking is not needed.
	_, err := s.Domains.CheckSendingDomain(ctx, accountID, domain)
	if mailroom.IsCode(err, mailroom.ECodeDomainNotVerified) {
		return &mailroom.Error{Code: mailroom.ECodeDomainNotVerified, Cause: err,
			Message: "The " + whose + " domain " + domain + " is not verified for this account; add it and verify it first."}
	}
	return err
}

// sign returns m.Raw signed with the key of m's From domain.
func (s *Service) sign(ctx context.Context, m *mailroom.Message) ([]byte, error) {
	d, err := s.Domains.SendingDomain(ctx, m.AccountID, m.Domain)
	if mailroom.IsCode(err, mailroom.ECodeNotFound) {
		// Removed since it was checked, a moment ago.
		return nil, mailroom.Errorf(mailroom.ECodeDomainNotVerified, "The domain %s is not a domain of this account; add and verify it first.", m.Domain)
	}
	if err != nil {
		return nil, err
	}
	key, err := s.Domains.DKIMKey(d)
	if err != nil {
		return nil, &mailroom.Error{Code: mailroom.ECodeInternal, Message: "The domain's DKIM key could not be opened.", Cause: err}
	}
	signed, err := s.Signer.SignRaw(m.Raw, key)
	if err != nil {
		return nil, &mailroom.Error{Code: mailroom.ECodeInternal, Message: "The message could not be signed.", Cause: err}
	}
	return signed, nil
}
