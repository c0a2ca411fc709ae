package http

import (
	"errors"
	"io"
	"net/http"
	"time"

	"github.com/mailroom/mailroom"
	"github.com/mailroom/mailroom/membudget"
)

// BodyExpansion is how many bytes of memory a request may come to hold for
// each byte of its body while it is served: the body read whole, its JSON
// decoded into strings, attachments decoded from base64, the message's
// digest and the content column encoded for storage, and html turned into
// the text part. It is measured, not guessed: the bytes allocated by one
// whole send through the API divided by its body's size (the most a send
// can hold at once is no more than it allocates), taken from the worst of
// BenchmarkSendMemory's cases on either engine (a 15 MiB body of html and
// an attachment on PostgreSQL, where storing it allocates more) and
// rounded up; BENCHMARKS.md "A memory budget for requests in
// flight" has the figures.
const BodyExpansion = 16

// MinRequestMemory is the smallest budget that serves the largest request
// a node accepts: a 16 MiB body, expanded.
const MinRequestMemory = MaxBodyBytes * BodyExpansion

// memoryRetryAfter is the Retry-After of a request refused for memory: the
// requests holding it take about that long to be served.
const memoryRetryAfter = time.Second

// reserveMemory takes what r's body will cost from the node's memory
// budget (docs/api.md "Limits") as it is read, BodyExpansion bytes per
// byte, membudget.MeterStep bytes of body at a time. A body with a
// Content-Length whose whole cost does not fit now, in the budget or in
// the account's share of it, is answered 503 service_unavailable with
// Retry-After at once, reporting false, without reading the body (over
// HTTP/1.x the connection then closes, so that an unsent body is not
// waited for); one that fits at first and not later, or a body of unknown
// length, gets the same answer when its next step does not fit. The returned
// function gives the memory back; it is called once the handler has
// returned, when what the request held is garbage.
func (s *Server) reserveMemory(w http.ResponseWriter, r *http.Request, accountID string) (*http.Request, func(), bool) {
	switch {
	case s.Memory == nil, r.Body == nil, r.Body == http.NoBody, r.ContentLength == 0:
		return r, func() {}, true
	case r.ContentLength > MaxBodyBytes:
		// Refused 413 without being read.
		return r, func() {}, true
	case r.ContentLength > 0:
		// What the whole body will cost must fit now, or the request is
		// refused before a byte of it is read; it is then reserved as
		// it arrives, so that a body that stalls (a client that sends its
		// headers and waits, for the read timeout) holds only what it
		// sent, not the memory of a body it never sends.
		if err := s.Memory.Check(accountID, r.ContentLength*BodyExpansion); err != nil {
			s.refuseForMemory(w, r, err)
			return r, nil, false
		}
	}
	// Every body is reserved as it is read: a body of unknown length
	// (chunked, or HTTP/2 without content-length), and one whose length
	// was checked above.
	res, _ := s.Memory.Reserve(accountID, 0)
	body := meteredBody{Closer: r.Body, Reader: membudget.NewReader(r.Body, res, BodyExpansion, func(err error) error {
		closeAfterAnswer(w, r)
		return s.memoryError(err)
	})}
	r2 := r.Clone(r.Context())
	r2.Body = body
	return r2, res.Release, true
}

// refuseForMemory answers a request that the budget has no room for.
func (s *Server) refuseForMemory(w http.ResponseWriter, r *http.Request, err error) {
	closeAfterAnswer(w, r)
	writeError(w, r, s.memoryError(err))
	if r.ProtoMajor == 2 {
		// As a 429: the client still sending gets the answer.
		lingerAfterAnswer(w, r, lingerRateLimited)
	}
}

// memoryError is the 503 of a refusal by the budget, counted by reason.
func (s *Server) memoryError(err error) error {
	msg := "The server is serving as many large requests as its memory allows; retry after the number of seconds in Retry-After."
	if errors.Is(err, membudget.ErrAccountShare) {
		msg = "This account's requests in flight hold its share of the server's memory; retry after the number of seconds in Retry-After."
	}
	s.MemoryRefusals.Count(membudget.SurfaceHTTP, err)
	return &mailroom.Error{Code: mailroom.ECodeUnavailable, Message: msg, RetryAfter: memoryRetryAfter}
}

// meteredBody is a body of unknown length read through the budget's
// metering reader.
type meteredBody struct {
	*membudget.Reader
	io.Closer
}
