package mailroom

import (
	"context"
	"strings"
	"time"
)

// Sender accepts sends (docs/api.md "Sending"). Its path is validation, one indexed read
// to check the sending domain, and one (group) commit: no DNS, no RSA and
// no SMTP, which all happen in the Deliverer.
type Sender struct {
	Store   MessageStore
	Domains *Domains
	// Templates renders the templates that sends name.
	Templates *Templates
	Now       func() time.Time
	// Queued is told when a message is queued for delivery now, so that
	// the local worker starts at once instead of at its next poll.
	Queued func()
}

// Send validates req for the account and stores it durably; a nil error
// means the message is committed. idempotencyHeader holds the values of
// the Idempotency-Key header, one per field line (none when absent).
func (s *Sender) Send(ctx context.Context, accountID string, req *SendRequest, idempotencyHeader []string) (AcceptResult, error) {
	now := s.Now().UTC()
	tpl, err := s.render(ctx, accountID, req)
	if IsCode(err, ECodeNotFound) {
		// A retry of a send whose template was deleted since is still
		// the send that was accepted: answer it as one.
		if key := retryKey(req, idempotencyHeader); key != "" {
			if res, lookErr := s.Store.IdempotentMessage(ctx, accountID, key, req.Digest()); !IsCode(lookErr, ECodeNotFound) {
				return res, lookErr
			}
		}
	}
	if err != nil {
		return AcceptResult{}, err
	}
	m, err := req.Validate(now, idempotencyHeader, tpl)
	if err != nil {
		return AcceptResult{}, err
	}
	if err := s.Domains.CheckSendingDomain(ctx, accountID, m.Domain); err != nil {
		return AcceptResult{}, err
	}
	m.ID = NewID(PrefixMessage, now)
	m.AccountID = accountID
	m.CreatedAt = now
	// RFC 5322 §3.6.4: a globally unique id on the sender's own domain.
	m.MessageIDHeader = strings.TrimPrefix(m.ID, PrefixMessage) + "@" + m.Domain
	res, err := s.Store.AcceptMessage(ctx, m)
	if err == nil && !res.Duplicate && res.Status == MessageQueued && s.Queued != nil {
		s.Queued()
	}
	return res, err
}

// render renders the template a request names, at accept time: the message
// holds the result, so editing the template later changes nothing it
// stored. A template the account does not have is ECodeNotFound, as on
// its own routes.
func (s *Sender) render(ctx context.Context, accountID string, req *SendRequest) (*RenderedTemplate, error) {
	switch {
	case req.Template == nil:
		return nil, nil
	case *req.Template == "":
		var v Validator
		v.Add("template", "must not be empty: give the id (tpl_…) or the name of a template, or leave template out")
		return nil, v.Err()
	case s.Templates == nil:
		return nil, Errorf(ECodeInternal, "templates are not configured")
	}
	return s.Templates.ForSend(ctx, accountID, *req.Template, req.Variables)
}

// retryKey is the request's idempotency key when it names one plainly (in
// the body, the header or both alike); "" otherwise, Validate says why.
func retryKey(req *SendRequest, header []string) string {
	key := ""
	if req.IdempotencyKey != nil {
		key = *req.IdempotencyKey
	}
	for _, h := range header {
		if key != "" && h != key {
			return ""
		}
		key = h
	}
	return key
}
