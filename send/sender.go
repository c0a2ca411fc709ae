package send

import (
	"context"
	"strings"
	"time"

	"github.com/mailroom/mailroom"
)

// Sender accepts sends (docs/api.md "Sending", "Batch sends"). Its path is
// validation, one indexed read to check each sending domain, and one
// (group) commit: no DNS, no RSA and no SMTP, which all happen in the
// Deliverer.
type Sender struct {
	Store   mailroom.MessageStore
	Domains mailroom.SendingDomains
	// Templates renders the templates that sends name.
	Templates mailroom.TemplateRenderer
	Now       func() time.Time
	// Queued is told when a message is queued for delivery now, so that
	// the local worker starts at once instead of at its next poll.
	Queued func()
	// Scheduled is told the time of a message scheduled for later, so
	// that the local worker wakes for it then (nil: it finds it by its
	// poll).
	Scheduled func(at time.Time)
}

// Send validates req for the account of key, the key it is sent with, and
// stores it durably; a nil error means the message is committed.
// idempotencyHeader holds the values of the Idempotency-Key header, one
// per field line (none when absent). A key restricted to one domain sends
// from that one alone (mailroom.APIKey.CheckSendingFrom).
func (s *Sender) Send(ctx context.Context, key *mailroom.APIKey, req *mailroom.SendRequest, idempotencyHeader []string) (mailroom.AcceptResult, error) {
	m, answered, err := s.prepare(ctx, key, req, idempotencyHeader, nil)
	if err != nil || m == nil {
		return answered, err
	}
	res, err := s.Store.AcceptMessage(ctx, m)
	if err == nil {
		s.notify([]*mailroom.Message{m}, []mailroom.AcceptOutcome{{Result: res}})
	}
	return res, err
}

// BatchItem is one item of a batch as the client sent it: its request, or
// the error that decoding it met (the item fails with it).
type BatchItem struct {
	Request *mailroom.SendRequest
	Err     error
}

// SendBatch accepts the items of a batch each on its own, as Send would,
// and stores those that pass in one transaction: outcomes[i] answers
// items[i], with its result or the error Send would have answered it. Each
// sending domain is checked once. An error means nothing was stored (the
// storage failed).
func (s *Sender) SendBatch(ctx context.Context, key *mailroom.APIKey, items []BatchItem) ([]mailroom.AcceptOutcome, error) {
	return s.SendBatchWith(ctx, key, items, BatchOptions{})
}

// SendBatchWith is SendBatch under opts. With a key (opts.IdempotencyHeader),
// the key covers the items (itemKey says how): a retry of the batch is
// answered as the first attempt was, and a batch that differs from the
// one first sent under the key is refused whole, ECodeIdempotencyKeyReused,
// before anything is stored. With opts.AllOrNothing, a refused item is the
// batch's error (refusedBatch) and nothing is stored; the outcomes are
// then nil.
//
// Two different batches sent at the same moment under one key are told
// apart by the store, item by item: the items the two have in common are
// stored once and the later batch's are answered
// ECodeIdempotencyKeyReused, but an item of the longer one past the
// shorter one's end may be stored as well.
func (s *Sender) SendBatchWith(ctx context.Context, key *mailroom.APIKey, items []BatchItem, opts BatchOptions) ([]mailroom.AcceptOutcome, error) {
	batchIdem, err := batchKey(opts.IdempotencyHeader, len(items))
	if err != nil {
		return nil, err
	}
	if batchIdem != "" {
		items = keyItems(batchIdem, items)
	}
	out := make([]mailroom.AcceptOutcome, len(items))
	batch := &batchState{domains: map[string]domainAnswer{}, renderBy: time.Now().Add(mailroom.MaxBatchRenderTime)}
	stored, err := s.storedUnderKeys(ctx, key.AccountID, items)
	if err != nil {
		return nil, err
	}
	retried := make([]bool, len(items))
	for i, it := range items {
		if it.Err != nil {
			continue
		}
		k, ok := stored[retryKey(it.Request, nil)]
		if !ok {
			continue
		}
		// A retry: answered from what was stored, not rendered again.
		retried[i] = true
		out[i].Result, out[i].Err = k.Answer(it.Request.Digest())
		if batchIdem != "" && out[i].Err != nil {
			return nil, anotherBatch(i, out[i].Err)
		}
	}
	var ms []*mailroom.Message
	var at []int // ms[k] answers items[at[k]]
	content := 0
	for i, it := range items {
		if it.Err != nil {
			out[i].Err = it.Err
			continue
		}
		if retried[i] {
			continue
		}
		m, answered, err := s.prepare(ctx, key, it.Request, nil, batch)
		switch {
		case mailroom.IsCode(err, mailroom.ECodeUnavailable):
			return nil, err
		case err != nil || m == nil:
			out[i] = mailroom.AcceptOutcome{Result: answered, Err: err}
		case content+m.ContentBytes() > mailroom.MaxBatchContentBytes:
			out[i].Err = mailroom.BatchTooLarge(m)
		default:
			content += m.ContentBytes()
			ms = append(ms, m)
			at = append(at, i)
		}
	}
	if opts.AllOrNothing {
		if err := refusedBatch(out); err != nil {
			return nil, err
		}
	}
	if len(ms) == 0 {
		return out, nil
	}
	accepted, err := s.Store.AcceptMessages(ctx, ms)
	if err != nil {
		return nil, err
	}
	for k, o := range accepted {
		out[at[k]] = o
	}
	s.notify(ms, accepted)
	return out, nil
}

// storedUnderKeys reads, in one query, the messages already stored under
// the items' idempotency keys.
func (s *Sender) storedUnderKeys(ctx context.Context, accountID string, items []BatchItem) (map[string]mailroom.KeyedMessage, error) {
	var keys []string
	for _, it := range items {
		if it.Err == nil {
			if key := retryKey(it.Request, nil); key != "" {
				keys = append(keys, key)
			}
		}
	}
	if len(keys) == 0 {
		return nil, nil
	}
	return s.Store.IdempotentMessages(ctx, accountID, keys)
}

// batchState is what the items of one batch share: the sending domains'
// answers (each domain is checked once) and the deadline of all their
// rendering together.
type batchState struct {
	domains  map[string]domainAnswer
	renderBy time.Time
}

// domainAnswer is a sending domain's check, as a batch keeps it for its
// other items from that domain.
type domainAnswer struct {
	tracking mailroom.Tracking
	err      error
}

// prepare turns a request into the message to store: rendered, validated,
// its sending domain checked, given its id; batch is nil for a single
// send. A request that cannot be
// accepted now but is the retry of one accepted before under the same
// idempotency key is answered as that one was (answered, with m nil): its
// scheduledAt may have passed since, its template or its domain may have
// been removed, and none of that changes what the first answer said.
func (s *Sender) prepare(ctx context.Context, key *mailroom.APIKey, req *mailroom.SendRequest, header []string, batch *batchState) (m *mailroom.Message, answered mailroom.AcceptResult, err error) {
	accountID := key.AccountID
	now := s.Now().UTC()
	m, err = s.validate(ctx, key, req, header, now, batch)
	if err == nil {
		return m, mailroom.AcceptResult{}, nil
	}
	// A batch looked its items' keys up before preparing any
	// (storedUnderKeys): a key not found then is not read again.
	if key := retryKey(req, header); batch == nil && key != "" && !mailroom.IsCode(err, mailroom.ECodeUnavailable) && !mailroom.IsCode(err, mailroom.ECodeInternal) {
		res, lookErr := s.Store.IdempotentMessage(ctx, accountID, key, req.Digest())
		if !mailroom.IsCode(lookErr, mailroom.ECodeNotFound) {
			return nil, res, lookErr
		}
	}
	return nil, mailroom.AcceptResult{}, err
}

func (s *Sender) validate(ctx context.Context, key *mailroom.APIKey, req *mailroom.SendRequest, header []string, now time.Time, batch *batchState) (*mailroom.Message, error) {
	accountID := key.AccountID
	var renderBy time.Time
	var checked map[string]domainAnswer
	if batch != nil {
		renderBy, checked = batch.renderBy, batch.domains
	}
	tpl, err := s.render(ctx, accountID, req, renderBy)
	if err != nil {
		return nil, err
	}
	m, err := req.Validate(now, header, tpl)
	if err != nil {
		return nil, err
	}
	if err := key.CheckSendingFrom("From", m.Domain); err != nil {
		return nil, err
	}
	answer, known := checked[m.Domain]
	if !known {
		answer.tracking, answer.err = s.Domains.CheckSendingDomain(ctx, accountID, m.Domain)
		if checked != nil && !mailroom.IsCode(answer.err, mailroom.ECodeUnavailable) {
			checked[m.Domain] = answer
		}
	}
	if answer.err != nil {
		return nil, answer.err
	}
	m.Tracking = mailroom.ResolveTracking(answer.tracking, req.Tracking, m.HTML)
	m.ID = mailroom.NewID(mailroom.PrefixMessage, now)
	m.AccountID = accountID
	m.CreatedAt = now
	// RFC 5322 §3.6.4: a globally unique id on the sender's own domain.
	m.MessageIDHeader = strings.TrimPrefix(m.ID, mailroom.PrefixMessage) + "@" + m.Domain
	return m, nil
}

// notify tells the local worker of new work: at once for queued messages,
// at the earliest time for scheduled ones.
func (s *Sender) notify(ms []*mailroom.Message, outcomes []mailroom.AcceptOutcome) {
	var queued bool
	var earliest time.Time
	for i, o := range outcomes {
		if o.Err != nil || o.Result.Duplicate {
			continue
		}
		switch at := ms[i].ScheduledAt; {
		case o.Result.Status == mailroom.MessageQueued:
			queued = true
		case o.Result.Status == mailroom.MessageScheduled && at != nil && (earliest.IsZero() || at.Before(earliest)):
			earliest = *at
		}
	}
	if queued && s.Queued != nil {
		s.Queued()
	}
	if !earliest.IsZero() && s.Scheduled != nil {
		s.Scheduled(earliest)
	}
}

// render renders the template a request names, at accept time: the message
// holds the result, so editing the template later changes nothing it
// stored. A template the account does not have is ECodeNotFound, as on
// its own routes.
func (s *Sender) render(ctx context.Context, accountID string, req *mailroom.SendRequest, renderBy time.Time) (*mailroom.RenderedTemplate, error) {
	switch {
	case req.Template == nil:
		return nil, nil
	case *req.Template == "":
		var v mailroom.Validator
		v.Add("template", "must not be empty: give the id (tpl_…) or the name of a template, or leave template out")
		return nil, v.Err()
	case s.Templates == nil:
		return nil, mailroom.Errorf(mailroom.ECodeInternal, "templates are not configured")
	}
	return s.Templates.ForSend(ctx, accountID, *req.Template, req.Variables, renderBy)
}

// retryKey is the request's idempotency key when it names a valid one
// plainly (in the body, the header or both alike); "" otherwise, and
// Validate says why.
func retryKey(req *mailroom.SendRequest, header []string) string {
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
	if mailroom.CheckIdempotencyKey(key) != "" {
		return "" // no key at all, or one that no message can hold
	}
	return key
}
