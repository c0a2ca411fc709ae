package http

import (
	"context"
	"net/http"
	"time"

	"github.com/mailroom/mailroom"
	"github.com/mailroom/mailroom/membudget"
	"github.com/mailroom/mailroom/resend"
	"github.com/mailroom/mailroom/send"
)

// resendSendEmail: Resend's POST /emails (docs/api.md "Moving from
// Resend"), over the accept path of POST /v1/send: the email is
// translated (package resend) and sent by send.Sender, with the
// Idempotency-Key header as /v1 takes it. A 200 {"id"} means the message
// is committed.
func (s *Server) resendSendEmail(w http.ResponseWriter, r *http.Request) {
	body, err := readJSONBody(r)
	if err != nil {
		writeError(w, r, err)
		return
	}
	var e resend.Email
	if err := unmarshalResendObject(body, &e); err != nil {
		writeError(w, r, err)
		return
	}
	fetch, fetchCtx, done := s.attachmentFetching(r)
	defer done()
	room := mailroom.MaxAttachmentBytes
	req, err := s.translateEmail(fetchCtx, r, &e, body, fetch, &room)
	if err != nil {
		writeError(w, r, err)
		return
	}
	res, err := s.Sender.Send(r.Context(), keyFrom(r.Context()), req, r.Header.Values("Idempotency-Key"))
	if err != nil {
		writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, resend.SendResult{ID: res.MessageID})
}

// resendSendBatch: Resend's POST /emails/batch, over the batch path of
// POST /v1/send/batch (send.Sender.SendBatchWith): up to
// resend.MaxBatchEmails emails, each translated on its own; the
// Idempotency-Key header covers the batch's items, and x-batch-validation
// strict (the default) stores all of them or none (a 4xx naming the
// refused item), permissive each on its own (the refused ones in errors).
func (s *Server) resendSendBatch(w http.ResponseWriter, r *http.Request) {
	permissive, err := resend.Permissive(r.Header.Values("X-Batch-Validation"))
	if err != nil {
		writeError(w, r, err)
		return
	}
	raws, err := decodeResendBatch(r)
	if err != nil {
		writeError(w, r, err)
		return
	}
	if err := resend.CheckBatchSize(len(raws)); err != nil {
		writeError(w, r, err)
		return
	}
	fetch, fetchCtx, done := s.attachmentFetching(r)
	defer done()
	room := mailroom.MaxBatchContentBytes
	items := make([]send.BatchItem, len(raws))
	for i, raw := range raws {
		var e resend.Email
		if err := unmarshalResendObject(raw, &e); err != nil {
			items[i].Err = err
			continue
		}
		items[i].Request, items[i].Err = s.translateEmail(fetchCtx, r, &e, raw, fetch, &room)
		if mailroom.IsCode(items[i].Err, mailroom.ECodeUnavailable) {
			writeError(w, r, items[i].Err)
			return
		}
	}
	outcomes, err := s.Sender.SendBatchWith(r.Context(), keyFrom(r.Context()), items, send.BatchOptions{
		IdempotencyHeader: r.Header.Values("Idempotency-Key"),
		AllOrNothing:      !permissive,
	})
	if err != nil {
		writeError(w, r, err)
		return
	}
	out := resend.BatchResult{Data: []resend.SendResult{}}
	for i, o := range outcomes {
		switch {
		case o.Err == nil:
			out.Data = append(out.Data, resend.SendResult{ID: o.Result.MessageID})
		case !permissive:
			// Stored by a concurrent batch under the same key between
			// the look-up and the commit (SendBatchWith says when).
			writeError(w, r, o.Err)
			return
		default:
			e := itemError(r, o.Err)
			out.Errors = append(out.Errors, resend.BatchError{Index: i, Message: resendMessage(e)})
		}
	}
	writeJSON(w, http.StatusOK, out)
}

// translateEmail translates one email, its paths fetched within room
// (what the request's attachments may still bring) and under fetchCtx,
// whose deadline (AttachmentFetchTimeout) bounds every fetch of the request
// together: an email of a hundred attachments whose servers never answer
// is refused within it, not after a hundred timeouts. Fetching is not
// storage work: the request's storage budget waits meanwhile.
func (s *Server) translateEmail(fetchCtx context.Context, r *http.Request, e *resend.Email, raw []byte, fetch resend.Fetcher, room *int) (*mailroom.SendRequest, error) {
	resume := pauseBudget(r)
	defer resume()
	return e.SendRequest(fetchCtx, resend.Translation{Now: s.now(), Fetch: fetch, FetchRoom: room}, raw)
}

// attachmentFetching is what one request's attachment paths are fetched
// with: the metered fetcher (meteredFetcher) and the context whose
// deadline all its fetches share (translateEmail). done releases both
// once the request is answered.
func (s *Server) attachmentFetching(r *http.Request) (resend.Fetcher, context.Context, func()) {
	fetch, release := s.meteredFetcher(keyFrom(r.Context()).AccountID)
	ctx, cancel := context.WithTimeout(r.Context(), s.attachmentFetchTimeout())
	return fetch, ctx, func() { cancel(); release() }
}

// meteredFetcher is the server's fetcher with what it fetches taken from
// the node's memory budget, as a body's bytes are (reserveMemory): a
// small request naming large files holds them, expanded as a body of
// their size would be. release gives the memory back once the request is
// answered.
func (s *Server) meteredFetcher(accountID string) (resend.Fetcher, func()) {
	if s.Memory == nil {
		return s.fetcher, func() {}
	}
	res, err := s.Memory.Reserve(accountID, 0)
	if err != nil {
		return s.fetcher, func() {}
	}
	return &metered{s: s, f: s.fetcher, res: res}, res.Release
}

type metered struct {
	s   *Server
	f   resend.Fetcher
	res *membudget.Reservation
}

func (m *metered) Fetch(ctx context.Context, url string, limit int) (*resend.Fetched, error) {
	f, err := m.f.Fetch(ctx, url, limit)
	if err != nil {
		return nil, err
	}
	if err := m.res.Grow(int64(len(f.Content)) * BodyExpansion); err != nil {
		return nil, m.s.memoryError(err)
	}
	return f, nil
}

func (s *Server) attachmentFetchTimeout() time.Duration {
	if s.AttachmentFetchTimeout > 0 {
		return s.AttachmentFetchTimeout
	}
	return resend.FetchTimeout
}
